-- 006-sample-blocks.sql: samples stored as packed blocks (issue 10).
--
-- One SQLite row per sample made ingest cost one INSERT per sample.  Now
-- strobed stores up to 4096 consecutive samples of one session as one row
-- of sample_blocks: first_row is the rowid the block's first sample had in
-- the old samples table (the rows of a block have consecutive rowids),
-- nr how many it holds, min_ns and max_ns the earliest and latest time_ns
-- among them, and data their columns, packed as doc/SCHEMA.md
-- ("sample_blocks") and lib/store/sampleblk.h describe.
--
-- "samples" is no longer a table of the file: strobe's programs, and any
-- program that loads the extension strobe_samples.so, see the blocks as an
-- eponymous virtual table with the old table's columns and rowids.
--
-- The old table is renamed here; strobed (db_open) then packs its rows
-- into blocks and drops it, in the same transaction as this migration.
ALTER TABLE samples RENAME TO samples_v5;
CREATE TABLE sample_blocks (
	first_row	INTEGER PRIMARY KEY,
	session_id	INTEGER NOT NULL,
	nr		INTEGER NOT NULL,
	min_ns		INTEGER NOT NULL,
	max_ns		INTEGER NOT NULL,
	data		BLOB NOT NULL
);
CREATE INDEX sample_blocks_by_session ON sample_blocks(session_id, first_row);
