// SPDX-License-Identifier: GPL-2.0
/*
 * strobe.ko - system-wide sampling driver for strobe.
 *
 * /dev/strobe (root only, one open file at a time) configures one session:
 * per sampled CPU one sampling perf event (kernel counter with an overflow
 * handler) and up to STROBE_MAX_COUNTERS counting events, and one ring buffer
 * that user space mmaps.  The overflow handler writes one struct
 * strobe_sample per overflow; see kernel/uapi/strobe.h for the formats.
 *
 * Lifetime: the session belongs to the open file.  It is built by
 * STROBE_IOC_CONFIG (once per open), started/stopped by START/STOP, and torn
 * down in ->release().  A mapping holds a reference on the file, so the rings
 * cannot be freed while mapped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/perf_event.h>
#include <linux/irq_work.h>
#include <linux/poll.h>
#include <linux/wait.h>
#include <linux/mutex.h>
#include <linux/cpumask.h>
#include <linux/cpu.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#include <linux/capability.h>
#include <linux/log2.h>
#include <linux/version.h>
#include <linux/ptrace.h>
#if defined(CONFIG_X86)
#include <asm/msr.h>
#elif defined(CONFIG_ARM64)
#include <asm/arch_timer.h>
#endif

#include "uapi/strobe.h"

/* Per-CPU ring: at most 16 MiB of records. */
#define STROBE_MAX_BUFFER_PAGES	4096
/* Refuse sampling frequencies above this (perf's default limit is 100 kHz). */
#define STROBE_MAX_FREQ		100000
#define STROBE_NR_MASK_CPUS	(sizeof(((struct strobe_config *)0)->cpu_mask) * 8)

struct strobe_cpu {
	int			cpu;
	struct strobe_sess	*sess;
	struct perf_event	*sample_ev;
	struct perf_event	*counter_ev[STROBE_MAX_COUNTERS];
	unsigned int		nr_counters;

	/* ring: STROBE_CTRL_SIZE bytes of control page, then data_size bytes */
	void			*ring;		/* vmalloc_user() */
	struct strobe_ring_ctrl	*ctrl;
	u8			*data;
	u32			data_size;	/* power of two */
	u32			watermark;

	/* Producer state, touched only by the overflow handler of this CPU. */
	u64			head;		/* private copy, never read back from user memory */
	u64			pending_lost;	/* dropped since the last LOST record */
	bool			woken;		/* wakeup queued since the ring went past the watermark */
	bool			in_handler;

	/* Statistics: written by the handler only, read by STROBE_IOC_STATS. */
	u64			samples;
	u64			lost;
	u64			handler_ns_total;
	u64			handler_ns_max;

	struct irq_work		wake_work;
};

struct strobe_sess {
	struct mutex		lock;		/* serialises ioctls */
	bool			configured;
	bool			running;
	unsigned int		nr_counters;
	u32			data_size;
	struct strobe_cpu	**cpus;		/* nr_cpu_ids entries, NULL = not sampled */
	wait_queue_head_t	wq;
};

static atomic_t strobe_busy = ATOMIC_INIT(0);

/* ------------------------------------------------------------------------ */
/* Overflow handler: NMI (x86 hardware PMU) or hard IRQ (hrtimer, arm64).   */

static __always_inline u64 strobe_read_tsc(u16 *flags)
{
#if defined(CONFIG_X86)
	*flags |= STROBE_SAMPLE_TSC_EXACT;
	return rdtsc();
#elif defined(CONFIG_ARM64)
	*flags |= STROBE_SAMPLE_TSC_EXACT;
	return __arch_counter_get_cntvct();
#else
	return 0;
#endif
}

/*
 * Read the running total of a counting event bound to this CPU.
 *
 * perf_event_read_local() is not exported to modules in 6.1; this is what it
 * does for our case, minus checks that hold by construction:
 *   - the event is a per-CPU event for this very CPU (event->cpu == this CPU;
 *     the caller is the overflow handler of this CPU's sampling event), it is
 *     not inherited and has no task: nobody else updates ->count concurrently
 *     except this CPU's own PMU code;
 *   - if it is active here (->oncpu == this CPU), ->pmu->read() folds the
 *     hardware delta into ->count.  On x86 that is x86_perf_event_update(),
 *     which is written to run in NMI (the PMI handler calls it): it publishes
 *     the new raw value with local64_cmpxchg() on ->prev_count and adds the
 *     delta with local64_add(), so an NMI between two halves of another
 *     update cannot double count.  For software events ->read() is a no-op
 *     or (cpu-clock/task-clock) an xchg of local_clock(), and their count is
 *     just a local64_t.
 *   - perf_event_read_local() does this under local_irq_save(), which does
 *     not mask NMIs either: it is documented as NMI-safe and the BPF helper
 *     bpf_perf_event_read() calls it from NMI.  The windows where ->oncpu is
 *     stale (event_sched_in/out) run with IRQs off and the PMU disabled
 *     (perf_pmu_disable), so neither a hard-IRQ handler (hrtimer) nor a PMI
 *     of our hardware sampling event can run inside them.
 * The counting events are created pinned, so they are never rotated out by
 * multiplexing: either they count all the time, or they go to ERROR state
 * (checked at START).
 */
static __always_inline u64 strobe_read_counter(struct perf_event *ev, int cpu)
{
	if (READ_ONCE(ev->oncpu) == cpu)
		ev->pmu->read(ev);
	return local64_read(&ev->count);
}

/*
 * Ring buffer protocol, as in kernel/events/ring_buffer.c:
 *
 *   producer (this handler)            consumer (user space)
 *   LOAD ctrl->tail                    LOAD ctrl->head
 *   smp_mb()               (A)         smp_rmb()             (C)
 *   STORE record data                  LOAD record data
 *   smp_wmb()              (B)         smp_mb()              (D)
 *   STORE ctrl->head                   STORE ctrl->tail
 *
 * A pairs with D: we never overwrite data the consumer is still reading.
 * B pairs with C: the consumer never reads a record before it is complete.
 * ->tail is written by user space and therefore untrusted: a value that
 * claims more free space than exists is treated as a full ring.  ->head is
 * kept privately in pc->head and only published, never read back.
 */
static __always_inline u64 strobe_ring_free(struct strobe_cpu *pc)
{
	u64 tail = READ_ONCE(pc->ctrl->tail);
	u64 used = pc->head - tail;

	smp_mb(); /* A */
	if (used > pc->data_size)
		return 0;
	return pc->data_size - used;
}

/*
 * Reserve @size bytes (multiple of 8, < data_size) at pc->head, padding to
 * the end of the buffer first if the record would straddle it.  Returns the
 * record's address or NULL if the ring has no room.  Nothing is published.
 */
static void *strobe_ring_reserve(struct strobe_cpu *pc, u64 *free, u32 size)
{
	u32 off = pc->head & (pc->data_size - 1);
	u32 to_end = pc->data_size - off;

	if (to_end < size) {
		struct strobe_rec_header *pad;

		if (*free < (u64)to_end + size)
			return NULL;
		pad = (struct strobe_rec_header *)(pc->data + off);
		pad->type = STROBE_REC_PAD;
		pad->size = to_end;	/* < size <= 112: fits in __u16 */
		pad->cpu = pc->cpu;
		pc->head += to_end;
		*free -= to_end;
		off = 0;
	}
	if (*free < size)
		return NULL;
	pc->head += size;
	*free -= size;
	return pc->data + off;
}

static void strobe_overflow(struct perf_event *event,
			    struct perf_sample_data *data,
			    struct pt_regs *regs)
{
	struct strobe_cpu *pc = event->overflow_handler_context;
	u64 t0 = ktime_get_mono_fast_ns();
	u16 flags = 0;
	u64 tsc = strobe_read_tsc(&flags);
	int cpu = smp_processor_id();
	u32 size = STROBE_SAMPLE_SIZE(pc->nr_counters);
	struct strobe_sample *s;
	u64 free, used, head0, t1;
	unsigned int i;

	/* A per-CPU event only fires on its CPU; a nested call cannot happen
	 * (one sampling event per CPU) but would corrupt the ring: drop it. */
	if (unlikely(cpu != pc->cpu || pc->in_handler)) {
		pc->lost++;
		return;
	}
	pc->in_handler = true;
	head0 = pc->head;
	free = strobe_ring_free(pc);

	if (pc->pending_lost) {
		struct strobe_lost *l;

		l = strobe_ring_reserve(pc, &free, sizeof(*l));
		if (l) {
			l->hdr.type = STROBE_REC_LOST;
			l->hdr.size = sizeof(*l);
			l->hdr.cpu = cpu;
			l->time_ns = t0;
			l->lost = pc->pending_lost;
			pc->pending_lost = 0;
		}
	}

	s = pc->pending_lost ? NULL : strobe_ring_reserve(pc, &free, size);
	if (s) {
		s->hdr.type = STROBE_REC_SAMPLE;
		s->hdr.size = size;
		s->hdr.cpu = cpu;
		s->tsc = tsc;
		s->time_ns = t0;
		s->ip = instruction_pointer(regs);
		s->pid = current->tgid;
		s->tid = current->pid;
		flags |= user_mode(regs) ? STROBE_SAMPLE_USER : STROBE_SAMPLE_KERNEL;
		s->flags = flags;
		s->nr_counters = pc->nr_counters;
		s->reserved0 = 0;
		s->reserved1 = 0;
		for (i = 0; i < pc->nr_counters; i++)
			s->counters[i] = strobe_read_counter(pc->counter_ev[i], cpu);
		pc->samples++;
	} else {
		pc->pending_lost++;
		pc->lost++;
		WRITE_ONCE(pc->ctrl->lost, pc->lost);
	}

	if (pc->head != head0) {
		smp_wmb(); /* B: records before head */
		WRITE_ONCE(pc->ctrl->head, pc->head);
	}

	used = pc->data_size - free;
	if (used >= pc->watermark || !s) {
		if (!pc->woken) {
			pc->woken = true;
			irq_work_queue(&pc->wake_work);
		}
	} else {
		pc->woken = false;
	}

	t1 = ktime_get_mono_fast_ns() - t0;
	pc->handler_ns_total += t1;
	if (t1 > pc->handler_ns_max)
		pc->handler_ns_max = t1;
	pc->in_handler = false;
}

static void strobe_wake(struct irq_work *work)
{
	struct strobe_cpu *pc = container_of(work, struct strobe_cpu, wake_work);

	wake_up_all(&pc->sess->wq);
}

/* ------------------------------------------------------------------------ */
/* Session setup and teardown (process context, under sess->lock).          */

static void strobe_free_cpu(struct strobe_cpu *pc)
{
	unsigned int i;

	if (pc->sample_ev)
		perf_event_release_kernel(pc->sample_ev);
	for (i = 0; i < STROBE_MAX_COUNTERS; i++)
		if (pc->counter_ev[i])
			perf_event_release_kernel(pc->counter_ev[i]);
	/* Events are gone: no handler can queue the irq_work any more. */
	irq_work_sync(&pc->wake_work);
	vfree(pc->ring);
	kfree(pc);
}

static void strobe_teardown(struct strobe_sess *sess)
{
	unsigned int cpu;

	if (!sess->cpus)
		return;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (sess->cpus[cpu])
			strobe_free_cpu(sess->cpus[cpu]);
	kfree(sess->cpus);
	sess->cpus = NULL;
	sess->configured = false;
	sess->running = false;
}

/*
 * Copy one perf_event_attr of @usize bytes from user space into a clean
 * kernel attr: only the fields strobe supports are taken over.  Features
 * that would change what is counted or need perf's ring buffer (inherit,
 * mmap, task, enable_on_exec, branch stacks, ...) are rejected if set, so
 * that surprises are errors; sample_type, read_format and wakeup_* are
 * ignored since strobe has its own record format.  The result is always
 * disabled (enabled by START) and pinned (never multiplexed).
 */
static int strobe_get_attr(struct perf_event_attr *out, u64 uptr, u32 usize,
			   bool sampling)
{
	struct perf_event_attr a;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = copy_struct_from_user(&a, sizeof(a), u64_to_user_ptr(uptr), usize);
	if (ret)
		return ret;		/* -EFAULT, or -E2BIG: unknown non-zero tail */
	if (a.size && a.size != usize)
		return -EINVAL;
	if (a.inherit || a.inherit_stat || a.enable_on_exec || a.task ||
	    a.mmap || a.mmap2 || a.mmap_data || a.comm || a.comm_exec ||
	    a.context_switch || a.namespaces || a.ksymbol || a.bpf_event ||
	    a.cgroup || a.text_poke || a.build_id || a.remove_on_exec ||
	    a.sigtrap || a.write_backward || a.aux_output || a.inherit_thread ||
	    a.use_clockid || a.exclusive || a.branch_sample_type ||
	    a.sample_regs_user || a.sample_stack_user || a.sample_regs_intr ||
	    a.aux_watermark || a.sample_max_stack || a.bp_type)
		return -EINVAL;

	out->type = a.type;
	out->size = sizeof(*out);
	out->config = a.config;
	out->config1 = a.config1;
	out->config2 = a.config2;
	out->exclude_user = a.exclude_user;
	out->exclude_kernel = a.exclude_kernel;
	out->exclude_hv = a.exclude_hv;
	out->exclude_idle = a.exclude_idle;
	out->exclude_host = a.exclude_host;
	out->exclude_guest = a.exclude_guest;
	out->exclude_callchain_kernel = 1;
	out->exclude_callchain_user = 1;
	out->pinned = 1;
	out->disabled = 1;

	if (sampling) {
		if (a.precise_ip > 3)
			return -EINVAL;
		out->precise_ip = a.precise_ip;
		if (a.freq) {
			if (!a.sample_freq || a.sample_freq > STROBE_MAX_FREQ)
				return -EINVAL;
			out->freq = 1;
			out->sample_freq = a.sample_freq;
		} else {
			if (!a.sample_period || (a.sample_period & (1ULL << 63)))
				return -EINVAL;
			out->sample_period = a.sample_period;
		}
	} else {
		if (a.freq || a.sample_period || a.precise_ip)
			return -EINVAL;
	}
	return 0;
}

static int strobe_setup_cpu(struct strobe_sess *sess, int cpu,
			    struct perf_event_attr *sattr,
			    struct perf_event_attr *cattrs, unsigned int nr)
{
	struct strobe_cpu *pc;
	struct perf_event *ev;
	unsigned int i;

	pc = kzalloc(sizeof(*pc), GFP_KERNEL);
	if (!pc)
		return -ENOMEM;
	pc->cpu = cpu;
	pc->sess = sess;
	pc->nr_counters = nr;
	pc->data_size = sess->data_size;
	pc->watermark = sess->data_size / 4;
	init_irq_work(&pc->wake_work, strobe_wake);
	sess->cpus[cpu] = pc;		/* freed by strobe_teardown() on error */

	pc->ring = vmalloc_user(STROBE_CTRL_SIZE + (size_t)pc->data_size);
	if (!pc->ring)
		return -ENOMEM;
	pc->ctrl = pc->ring;
	pc->data = (u8 *)pc->ring + STROBE_CTRL_SIZE;
	pc->ctrl->data_size = pc->data_size;
	pc->ctrl->watermark = pc->watermark;

	/* Counting events first: the handler reads them once sampling runs. */
	for (i = 0; i < nr; i++) {
		ev = perf_event_create_kernel_counter(&cattrs[i], cpu, NULL,
						      NULL, NULL);
		if (IS_ERR(ev))
			return PTR_ERR(ev);
		pc->counter_ev[i] = ev;
	}
	ev = perf_event_create_kernel_counter(sattr, cpu, NULL,
					      strobe_overflow, pc);
	if (IS_ERR(ev))
		return PTR_ERR(ev);
	pc->sample_ev = ev;
	return 0;
}

static long strobe_ioc_config(struct strobe_sess *sess, void __user *uarg)
{
	struct strobe_config cfg;
	struct perf_event_attr sattr;
	struct perf_event_attr *cattrs = NULL;
	cpumask_var_t mask;
	unsigned int i;
	int cpu, ret;

	if (copy_from_user(&cfg, uarg, sizeof(cfg)))
		return -EFAULT;
	if (cfg.size != sizeof(cfg))
		return -EINVAL;
	if (sess->configured)
		return -EBUSY;
	if (cfg.nr_counters > STROBE_MAX_COUNTERS)
		return -E2BIG;
	if (cfg.attr_size < PERF_ATTR_SIZE_VER0 || cfg.attr_size > PAGE_SIZE ||
	    cfg.attr_size % 8)
		return -EINVAL;
	if (!cfg.buffer_pages || !is_power_of_2(cfg.buffer_pages) ||
	    cfg.buffer_pages > STROBE_MAX_BUFFER_PAGES)
		return -EINVAL;
	if (!cfg.sample_attr || (cfg.nr_counters && !cfg.counter_attrs))
		return -EFAULT;

	ret = strobe_get_attr(&sattr, cfg.sample_attr, cfg.attr_size, true);
	if (ret)
		return ret;
	if (cfg.nr_counters) {
		cattrs = kcalloc(cfg.nr_counters, sizeof(*cattrs), GFP_KERNEL);
		if (!cattrs)
			return -ENOMEM;
		for (i = 0; i < cfg.nr_counters; i++) {
			ret = strobe_get_attr(&cattrs[i],
					      cfg.counter_attrs + (u64)i * cfg.attr_size,
					      cfg.attr_size, false);
			if (ret)
				goto out_attrs;
		}
	}

	if (!zalloc_cpumask_var(&mask, GFP_KERNEL)) {
		ret = -ENOMEM;
		goto out_attrs;
	}

	cpus_read_lock();
	for (i = 0; i < STROBE_NR_MASK_CPUS; i++) {
		if (!(cfg.cpu_mask[i / 64] & (1ULL << (i % 64))))
			continue;
		if (i >= nr_cpu_ids || !cpu_online(i)) {
			ret = -EINVAL;
			goto out_unlock;
		}
		cpumask_set_cpu(i, mask);
	}
	if (cpumask_empty(mask))
		cpumask_copy(mask, cpu_online_mask);

	sess->cpus = kcalloc(nr_cpu_ids, sizeof(*sess->cpus), GFP_KERNEL);
	if (!sess->cpus) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	sess->nr_counters = cfg.nr_counters;
	sess->data_size = cfg.buffer_pages * PAGE_SIZE;
	for_each_cpu(cpu, mask) {
		ret = strobe_setup_cpu(sess, cpu, &sattr, cattrs, cfg.nr_counters);
		if (ret)
			break;
	}
	cpus_read_unlock();
	if (ret)
		strobe_teardown(sess);
	else
		smp_store_release(&sess->configured, true); /* pairs with poll */
	goto out_mask;

out_unlock:
	cpus_read_unlock();
out_mask:
	free_cpumask_var(mask);
out_attrs:
	kfree(cattrs);
	return ret;
}

/*
 * After its sampling event is stopped, hand a pending loss count to the
 * consumer, so that drops at the end of a session are reported in-band and
 * not only in ctrl->lost.  perf_event_disable() has returned, so the handler
 * cannot run: this is the single producer now (process context).
 */
static void strobe_flush_lost(struct strobe_cpu *pc)
{
	struct strobe_lost *l;
	u64 free;

	if (!pc->pending_lost)
		return;
	free = strobe_ring_free(pc);
	l = strobe_ring_reserve(pc, &free, sizeof(*l));
	if (!l)
		return;		/* still full: ctrl->lost has the count */
	l->hdr.type = STROBE_REC_LOST;
	l->hdr.size = sizeof(*l);
	l->hdr.cpu = pc->cpu;
	l->time_ns = ktime_get_mono_fast_ns();
	l->lost = pc->pending_lost;
	pc->pending_lost = 0;
	smp_wmb(); /* B: the record before head */
	WRITE_ONCE(pc->ctrl->head, pc->head);
}

static void strobe_stop(struct strobe_sess *sess)
{
	unsigned int cpu, i;
	struct strobe_cpu *pc;

	/*
	 * Sampling events first, on every CPU: perf_event_disable() returns
	 * after the event is stopped on its CPU (cross-call; hrtimer events
	 * cancel their timer synchronously), so no handler reads a counter
	 * that is being disabled below.
	 */
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if ((pc = sess->cpus[cpu]))
			perf_event_disable(pc->sample_ev);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if ((pc = sess->cpus[cpu]))
			strobe_flush_lost(pc);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if ((pc = sess->cpus[cpu]))
			for (i = 0; i < pc->nr_counters; i++)
				perf_event_disable(pc->counter_ev[i]);
	sess->running = false;
	wake_up_all(&sess->wq);
}

static long strobe_ioc_start(struct strobe_sess *sess)
{
	unsigned int cpu, i;
	struct strobe_cpu *pc;

	if (!sess->configured)
		return -EINVAL;
	if (sess->running)
		return -EBUSY;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if ((pc = sess->cpus[cpu]))
			for (i = 0; i < pc->nr_counters; i++)
				perf_event_enable(pc->counter_ev[i]);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if ((pc = sess->cpus[cpu]))
			perf_event_enable(pc->sample_ev);
	sess->running = true;

	/* Pinned events that could not get a counter are in ERROR state. */
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		if (!(pc = sess->cpus[cpu]))
			continue;
		for (i = 0; i < pc->nr_counters; i++)
			if (READ_ONCE(pc->counter_ev[i]->state) == PERF_EVENT_STATE_ERROR)
				goto nospc;
		if (READ_ONCE(pc->sample_ev->state) == PERF_EVENT_STATE_ERROR)
			goto nospc;
	}
	return 0;
nospc:
	strobe_stop(sess);
	return -ENOSPC;
}

static long strobe_ioc_stats(struct strobe_sess *sess, void __user *uarg)
{
	struct strobe_stats st;
	struct strobe_cpu_stats cs;
	struct strobe_cpu_stats __user *ucs;
	unsigned int cpu, n, i;
	struct strobe_cpu *pc;
	u64 enabled, running;

	if (copy_from_user(&st, uarg, sizeof(st)))
		return -EFAULT;
	if (st.size != sizeof(st))
		return -EINVAL;
	if (!sess->configured)
		return -EINVAL;
	n = min_t(u32, st.nr_cpus, nr_cpu_ids);
	ucs = u64_to_user_ptr(st.cpus);
	for (cpu = 0; cpu < n; cpu++) {
		memset(&cs, 0, sizeof(cs));
		pc = sess->cpus[cpu];
		if (pc) {
			/* 64-bit loads of handler-owned counters: no tearing
			 * on 64-bit; values may be one sample apart. */
			cs.samples = READ_ONCE(pc->samples);
			cs.lost = READ_ONCE(pc->lost);
			cs.handler_ns_total = READ_ONCE(pc->handler_ns_total);
			cs.handler_ns_max = READ_ONCE(pc->handler_ns_max);
			/* Process context: perf_event_read_value() may IPI
			 * the event's CPU and sleep on the context mutex. */
			cs.nr_counters = pc->nr_counters;
			for (i = 0; i < pc->nr_counters; i++)
				cs.counters[i] = perf_event_read_value(pc->counter_ev[i],
								       &enabled, &running);
		}
		if (copy_to_user(&ucs[cpu], &cs, sizeof(cs)))
			return -EFAULT;
	}
	st.nr_cpus = nr_cpu_ids;
	if (copy_to_user(uarg, &st, sizeof(st)))
		return -EFAULT;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* File operations.                                                         */

static int strobe_open(struct inode *inode, struct file *file)
{
	struct strobe_sess *sess;

	if (!perfmon_capable())
		return -EPERM;
	if (atomic_cmpxchg(&strobe_busy, 0, 1))
		return -EBUSY;
	sess = kzalloc(sizeof(*sess), GFP_KERNEL);
	if (!sess) {
		atomic_set(&strobe_busy, 0);
		return -ENOMEM;
	}
	mutex_init(&sess->lock);
	init_waitqueue_head(&sess->wq);
	file->private_data = sess;
	return nonseekable_open(inode, file);
}

static int strobe_release(struct inode *inode, struct file *file)
{
	struct strobe_sess *sess = file->private_data;

	mutex_lock(&sess->lock);
	if (sess->running)
		strobe_stop(sess);
	strobe_teardown(sess);
	mutex_unlock(&sess->lock);
	kfree(sess);
	atomic_set(&strobe_busy, 0);
	return 0;
}

static long strobe_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct strobe_sess *sess = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	mutex_lock(&sess->lock);
	switch (cmd) {
	case STROBE_IOC_CONFIG:
		ret = strobe_ioc_config(sess, uarg);
		break;
	case STROBE_IOC_START:
		ret = strobe_ioc_start(sess);
		break;
	case STROBE_IOC_STOP:
		ret = sess->configured ? 0 : -EINVAL;
		if (sess->running)
			strobe_stop(sess);
		break;
	case STROBE_IOC_STATS:
		ret = strobe_ioc_stats(sess, uarg);
		break;
	default:
		ret = -ENOTTY;
	}
	mutex_unlock(&sess->lock);
	return ret;
}

/*
 * mmap: CPU c's ring lives at offset c * (STROBE_CTRL_SIZE + data_size).
 * A mapping must lie within one CPU's ring.  Mappings that include record
 * pages are read-only (and may never become writable); a mapping of the
 * control page alone may be writable, so the consumer can store ->tail.
 *
 * No sess->lock here: ->mmap runs under mmap_lock, and the ioctls fault on
 * user memory (mmap_lock) with sess->lock held; taking it here would be an
 * ABBA deadlock.  Once configured, ->data_size, ->cpus and the rings are
 * fixed until ->release(), which cannot run while mmap() holds the file.
 */
static int strobe_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct strobe_sess *sess = file->private_data;
	unsigned long npages = vma_pages(vma);
	unsigned long ring_pages, cpu, pgoff;
	struct strobe_cpu *pc;

	if (!smp_load_acquire(&sess->configured))	/* pairs with CONFIG */
		return -EINVAL;
	ring_pages = 1 + sess->data_size / PAGE_SIZE;
	cpu = vma->vm_pgoff / ring_pages;
	pgoff = vma->vm_pgoff % ring_pages;
	if (cpu >= nr_cpu_ids || npages > ring_pages - pgoff)
		return -EINVAL;
	pc = sess->cpus[cpu];
	if (!pc)
		return -ENODEV;
	if (pgoff + npages > 1) {
		if (vma->vm_flags & VM_WRITE)
			return -EPERM;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
		vm_flags_clear(vma, VM_MAYWRITE);
#else
		vma->vm_flags &= ~VM_MAYWRITE;
#endif
	}
	return remap_vmalloc_range(vma, pc->ring, pgoff);
}

static __poll_t strobe_poll(struct file *file, poll_table *wait)
{
	struct strobe_sess *sess = file->private_data;
	struct strobe_cpu *pc;
	unsigned int cpu;
	__poll_t mask = 0;

	poll_wait(file, &sess->wq, wait);
	/* No lock: ->cpus is stable while configured (freed only in release). */
	if (!smp_load_acquire(&sess->configured))
		return 0;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		u64 used;

		pc = sess->cpus[cpu];
		if (!pc)
			continue;
		used = READ_ONCE(pc->ctrl->head) - READ_ONCE(pc->ctrl->tail);
		if (used >= pc->watermark || (used && !READ_ONCE(sess->running)))
			mask |= EPOLLIN | EPOLLRDNORM;
	}
	return mask;
}

static const struct file_operations strobe_fops = {
	.owner		= THIS_MODULE,
	.open		= strobe_open,
	.release	= strobe_release,
	.unlocked_ioctl	= strobe_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= strobe_mmap,
	.poll		= strobe_poll,
	.llseek		= no_llseek,
};

static struct miscdevice strobe_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "strobe",
	.fops	= &strobe_fops,
	.mode	= 0600,
};

static int __init strobe_init(void)
{
	return misc_register(&strobe_misc);
}

static void __exit strobe_exit(void)
{
	misc_deregister(&strobe_misc);
}

module_init(strobe_init);
module_exit(strobe_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("strobe system-wide sampling driver");
