/*
 * calendar.c - UTC days, the fleet's partitions: the day of a wall time,
 * a day's date as ClickHouse's Date writes it, and back (push.h).
 */
#include "config.h"
#include <stdio.h>
#include "push.h"

#define NS_PER_DAY	(86400LL * 1000000000LL)

int64_t push_day(int64_t wall_ns)
{
	int64_t d = wall_ns / NS_PER_DAY;

	if (wall_ns % NS_PER_DAY < 0)
		d--;
	return d;
}

void push_day_str(int64_t day, char out[11])
{
	/* days since 1970-01-01 to a civil date (proleptic Gregorian) */
	int64_t z = day + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153, dd = doy - (153 * mp + 2) / 5 + 1;
	int64_t m = mp < 10 ? mp + 3 : mp - 9;

	if (m <= 2)
		y++;
	if (y < 1970)		/* ClickHouse's Date starts there */
		y = 1970, m = 1, dd = 1;
	if (y > 2105)
		y = 2105, m = 12, dd = 31;
	snprintf(out, 11, "%04d-%02d-%02d", (int)y, (int)m, (int)dd);
}

int64_t push_day_of_date(int64_t y, int64_t m, int64_t d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}
