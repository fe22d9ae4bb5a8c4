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
 *
 * CPU hotplug: each configured session is an instance of a multi-instance
 * cpuhp state.  Its callbacks only note the transition (strobe_cpu_online(),
 * strobe_cpu_offline()); strobe_hotplug_work() then releases the events of a
 * CPU that went down and creates them for one that came up, writing a
 * STROBE_REC_CPU_OFFLINE / _ONLINE record in that CPU's ring.  The ring and
 * its mappings stay for the whole session.
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
#include <linux/cpuhotplug.h>
#include <linux/workqueue.h>
#if defined(CONFIG_X86)
#include <asm/msr.h>
#include <asm/unwind.h>
#elif defined(CONFIG_ARM64)
#include <asm/arch_timer.h>
#include <asm/pointer_auth.h>
#include <linux/stacktrace.h>
#endif

#include "uapi/strobe.h"

/* Per-CPU ring: at most 16 MiB of records. */
#define STROBE_MAX_BUFFER_PAGES	4096
/* Refuse sampling frequencies above this (perf's default limit is 100 kHz). */
#define STROBE_MAX_FREQ		100000
#define STROBE_NR_MASK_CPUS	(sizeof(((struct strobe_config *)0)->cpu_mask) * 8)

/*
 * Callchains (STROBE_CONFIG_CALLCHAIN), see strobe_callchain().  At most
 * STROBE_KSTACK_MAX kernel return addresses after the sampled kernel PC,
 * and STROBE_USTACK_MAX user entries, the user PC included (perf's default
 * kernel.perf_event_max_stack is 127).  With the two context markers a
 * chain has at most STROBE_CHAIN_MAX entries, and the largest sample record
 * (STROBE_REC_MAX_SIZE) fits in the smallest ring (one 4 KiB page) and in
 * the header's __u16 size.
 */
#if defined(CONFIG_X86) || defined(CONFIG_ARM64)
#define STROBE_HAVE_CALLCHAIN	1
#else
#define STROBE_HAVE_CALLCHAIN	0
#endif
#define STROBE_KSTACK_MAX	64
#define STROBE_USTACK_MAX	127
#define STROBE_CHAIN_MAX	(2 + 1 + STROBE_KSTACK_MAX + STROBE_USTACK_MAX)
#define STROBE_REC_MAX_SIZE	STROBE_SAMPLE_SIZE(STROBE_MAX_COUNTERS + STROBE_CHAIN_MAX)
/*
 * arm64 walks the whole stack of the handler with stack_trace_save() and
 * keeps what follows the sampled PC: room for the handler's own frames
 * (about 20 from the PMU or timer interrupt) and STROBE_KSTACK_MAX more.
 */
#define STROBE_KTRACE_MAX	(STROBE_KSTACK_MAX + 64)

struct strobe_cpu {
	int			cpu;
	struct strobe_sess	*sess;
	/*
	 * The events, NULL while the CPU is down.  Changed only under
	 * sess->lock, and only while the sampling event is disabled or gone:
	 * the handler reads counter_ev[] and counter_base[].
	 */
	struct perf_event	*sample_ev;
	struct perf_event	*counter_ev[STROBE_MAX_COUNTERS];
	/* totals of the counting events released when the CPU went down */
	u64			counter_base[STROBE_MAX_COUNTERS];
	unsigned int		nr_counters;
	/*
	 * Hotplug: hp_gen is bumped by the cpuhp callbacks of this CPU (under
	 * the hotplug lock); ev_gen is hp_gen when the events were made.  The
	 * events are dead (perf removed them from the CPU's context when it
	 * went down) once the two differ.
	 */
	atomic_t		hp_gen;
	int			ev_gen;
	u64			offline_ns;	/* set by strobe_cpu_offline() */

	/* ring: one control page (PAGE_SIZE), then data_size bytes */
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
	u64			last_ns;	/* time of the last record */
	/*
	 * Callchain scratch, NULL without STROBE_CONFIG_CALLCHAIN: the chain
	 * is built here before its record is reserved (its length sets the
	 * record's size).  Only the handler of this CPU uses them, and it
	 * does not nest (in_handler).
	 */
	u64			*ips;		/* STROBE_CHAIN_MAX entries */
	unsigned long		*ktrace;	/* STROBE_KTRACE_MAX (arm64) */

	/* Statistics: written by the handler only, read by STROBE_IOC_STATS. */
	u64			samples;
	u64			lost;
	u64			handler_ns_total;
	u64			handler_ns_max;
	/* Hotplug statistics, under sess->lock. */
	u64			nr_offline;
	u64			nr_online;

	struct irq_work		wake_work;
};

struct strobe_sess {
	struct mutex		lock;		/* serialises ioctls and hotplug work */
	bool			configured;
	bool			running;
	unsigned int		nr_counters;
	u32			data_size;
	u32			flags;		/* STROBE_CONFIG_* */
	struct strobe_cpu	**cpus;		/* nr_cpu_ids entries, NULL = not sampled */
	wait_queue_head_t	wq;
	/* what to create when a CPU comes (back) up */
	struct perf_event_attr	sattr;
	struct perf_event_attr	cattrs[STROBE_MAX_COUNTERS];
	struct hlist_node	hp_node;	/* instance of strobe_hp_state */
	bool			hp_added;
	struct work_struct	hp_work;
};

static atomic_t strobe_busy = ATOMIC_INIT(0);
static enum cpuhp_state strobe_hp_state;

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
 *     hardware delta into ->count.  That ->read() may run here, in NMI or
 *     hard IRQ context, is what strobe_counter_readable() made sure of at
 *     CONFIG: only PMUs whose ->read() is lockless and NMI-safe get here.
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
 * Reserve @size bytes (multiple of 8, at most STROBE_REC_MAX_SIZE, which is
 * less than the smallest data_size) at pc->head, padding to the end of the
 * buffer first if the record would straddle it.  Returns the record's
 * address or NULL if the ring has no room.  Nothing is published.
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
		pad->size = to_end;	/* < size <= STROBE_REC_MAX_SIZE: fits in __u16 */
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

/* A pending loss count goes in-band before the next record, if it fits. */
static void strobe_put_lost(struct strobe_cpu *pc, u64 *free, u64 time)
{
	struct strobe_lost *l;

	if (!pc->pending_lost)
		return;
	l = strobe_ring_reserve(pc, free, sizeof(*l));
	if (!l)
		return;
	l->hdr.type = STROBE_REC_LOST;
	l->hdr.size = sizeof(*l);
	l->hdr.cpu = pc->cpu;
	l->time_ns = time;
	l->lost = pc->pending_lost;
	pc->pending_lost = 0;
}

/*
 * Callchains (STROBE_CONFIG_CALLCHAIN), in perf's PERF_SAMPLE_CALLCHAIN
 * layout: PERF_CONTEXT_KERNEL, the kernel PC, its callers' return
 * addresses; then PERF_CONTEXT_USER, the user PC, return addresses found by
 * following the user frame pointers.  A sample taken in user mode has no
 * kernel part; a kernel thread's has no user part.
 *
 * All of it runs in the overflow handler (NMI, or hard IRQ): only the
 * kernel's own unwinder, which perf runs in the same place, and user memory
 * read through copy_from_user_nofault(), which fails instead of faulting
 * (pagefault_disable()) and on x86 also when the CPU is between two address
 * spaces (nmi_uaccess_okay()).  Everything read from user memory is
 * untrusted: the walk stops at a null, misaligned or unreadable frame
 * pointer, at a frame pointer that does not grow (user stacks grow down, so
 * callers' frames are at higher addresses: this bounds the walk even
 * without the entry limit), and at STROBE_USTACK_MAX entries.
 */
#if STROBE_HAVE_CALLCHAIN

/* A frame record: x86-64 [rbp] and [rbp + 8], arm64 [x29] and [x29 + 8]. */
struct strobe_uframe {
	unsigned long	next;	/* the caller's frame pointer */
	unsigned long	ret;	/* the return address into the caller */
};

#if defined(CONFIG_X86)
/*
 * The ORC unwinder, as perf_callchain_kernel() uses it.  Real interrupt or
 * PMI registers (X86_EFLAGS_FIXED is always set in a real flags image)
 * start at the interrupted frame; the registers perf_fetch_caller_regs()
 * makes up for software events and tracepoints have no flags, and the walk
 * starts from their stack pointer.
 */
static unsigned int strobe_kernel_callers(struct strobe_cpu *pc, u64 *ips,
					  unsigned int max, struct pt_regs *regs)
{
	struct unwind_state state;
	unsigned long addr;
	unsigned int n = 0;

	if (regs->flags & X86_EFLAGS_FIXED)
		unwind_start(&state, current, regs, NULL);
	else
		unwind_start(&state, current, NULL, (unsigned long *)regs->sp);
	for (; !unwind_done(&state) && n < max; unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
		if (!addr)
			break;
		if (!n && addr == regs->ip)	/* made-up regs: ip is a caller */
			continue;
		ips[n++] = addr;
	}
	return n;
}

static __always_inline bool strobe_user_fp_mode(struct pt_regs *uregs)
{
	return user_64bit_mode(uregs);	/* no walk of 32-bit frames */
}

static __always_inline unsigned long strobe_user_fp(struct pt_regs *uregs)
{
	return uregs->bp;
}

static __always_inline unsigned long strobe_user_ret(unsigned long ret)
{
	return ret;
}
#elif defined(CONFIG_ARM64)
/*
 * arm64 6.1 exports no unwinder that starts from a pt_regs
 * (arch_stack_walk() is not exported), but stack_trace_save() is: it walks
 * the frame records from here, through the handler and the IRQ stack, into
 * the exception entry, whose frame record holds the interrupted PC (ELR)
 * and frame pointer.  What follows the first entry equal to the sampled PC
 * is the interrupted code's callers.  If the PC is not among the entries
 * (deeper than STROBE_KTRACE_MAX), the kernel part is the PC alone.
 */
static unsigned int strobe_kernel_callers(struct strobe_cpu *pc, u64 *ips,
					  unsigned int max, struct pt_regs *regs)
{
	unsigned long ip = instruction_pointer(regs);
	unsigned int nr, i, n = 0;

	nr = stack_trace_save(pc->ktrace, STROBE_KTRACE_MAX, 0);
	for (i = 0; i < nr && pc->ktrace[i] != ip; i++)
		;
	for (i++; i < nr && n < max; i++)
		ips[n++] = pc->ktrace[i];
	return n;
}

static __always_inline bool strobe_user_fp_mode(struct pt_regs *uregs)
{
	return !compat_user_mode(uregs);	/* no walk of AArch32 frames */
}

static __always_inline unsigned long strobe_user_fp(struct pt_regs *uregs)
{
	return uregs->regs[29];
}

/* A return address signed by pointer authentication, without its PAC. */
static __always_inline unsigned long strobe_user_ret(unsigned long ret)
{
	return ptrauth_strip_insn_pac(ret);
}
#endif

/*
 * The user PC and up to @max - 1 return addresses above it, from the frame
 * pointer of @uregs.  A frameless function (the leaf, often) does not show
 * its caller: the return address is in a register or on the stack where no
 * frame record points.
 */
static unsigned int strobe_user_chain(u64 *ips, unsigned int max,
				      struct pt_regs *uregs)
{
	struct strobe_uframe f;
	unsigned long fp;
	unsigned int n = 0;

	ips[n++] = instruction_pointer(uregs);
	if (!strobe_user_fp_mode(uregs))
		return n;
	fp = strobe_user_fp(uregs);
	while (n < max) {
		if (!fp || (fp & (sizeof(unsigned long) - 1)))
			break;
		if (copy_from_user_nofault(&f, (const void __user *)fp, sizeof(f)))
			break;
		f.ret = strobe_user_ret(f.ret);
		if (!f.ret)
			break;
		ips[n++] = f.ret;
		if (f.next <= fp)
			break;
		fp = f.next;
	}
	return n;
}

/*
 * Build the chain of the sample at @regs into pc->ips; returns its length,
 * at most STROBE_CHAIN_MAX.  The user registers of a sample taken in the
 * kernel are the ones saved at its entry from user mode (task_pt_regs());
 * a kernel thread has none (no mm, or PF_KTHREAD: a kthread that borrowed
 * an mm runs no user code).
 */
static unsigned int strobe_callchain(struct strobe_cpu *pc, struct pt_regs *regs)
{
	u64 *ips = pc->ips;
	struct pt_regs *uregs = regs;
	unsigned int n = 0;

	if (!user_mode(regs)) {
		ips[n++] = PERF_CONTEXT_KERNEL;
		ips[n++] = instruction_pointer(regs);
		n += strobe_kernel_callers(pc, ips + n, STROBE_KSTACK_MAX, regs);
		uregs = NULL;
		if (current->mm && !(current->flags & PF_KTHREAD)) {
			uregs = task_pt_regs(current);
			if (!user_mode(uregs))
				uregs = NULL;
		}
	}
	if (uregs) {
		ips[n++] = PERF_CONTEXT_USER;
		n += strobe_user_chain(ips + n, STROBE_USTACK_MAX, uregs);
	}
	return n;
}

#else /* !STROBE_HAVE_CALLCHAIN: CONFIG refuses STROBE_CONFIG_CALLCHAIN */

static unsigned int strobe_callchain(struct strobe_cpu *pc, struct pt_regs *regs)
{
	return 0;
}

#endif

static void strobe_overflow(struct perf_event *event,
			    struct perf_sample_data *data,
			    struct pt_regs *regs)
{
	struct strobe_cpu *pc = event->overflow_handler_context;
	u64 t0 = ktime_get_mono_fast_ns();
	u16 flags = 0;
	u64 tsc = strobe_read_tsc(&flags);
	int cpu = smp_processor_id();
	u64 counters[STROBE_MAX_COUNTERS];
	unsigned int i, nr_ips = 0;
	struct strobe_sample *s;
	u64 free, used, head0, t1;
	u32 size;

	/*
	 * A per-CPU event only fires on its CPU; a nested call cannot happen
	 * (one sampling event per CPU) but would corrupt the ring: drop it.
	 */
	if (unlikely(cpu != pc->cpu || pc->in_handler)) {
		pc->lost++;
		return;
	}
	pc->in_handler = true;

	/*
	 * The counters first, as close to the sample as we can, then the
	 * callchain, whose length sizes the record.  counter_ev[] and
	 * counter_base[] do not change under us: they are replaced only while
	 * this CPU's sampling event is disabled or released
	 * (strobe_cpu_down(), strobe_cpu_up()).
	 */
	for (i = 0; i < pc->nr_counters; i++)
		counters[i] = pc->counter_base[i] +
			      strobe_read_counter(pc->counter_ev[i], cpu);
	if (pc->ips) {
		nr_ips = strobe_callchain(pc, regs);	/* <= STROBE_CHAIN_MAX */
		flags |= STROBE_SAMPLE_CALLCHAIN;
	}
	size = STROBE_SAMPLE_SIZE(pc->nr_counters + nr_ips);	/* <= STROBE_REC_MAX_SIZE */

	head0 = pc->head;
	free = strobe_ring_free(pc);
	strobe_put_lost(pc, &free, t0);
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
		s->nr_ips = nr_ips;
		s->reserved1 = 0;
		/* set by the PMU before it calls us (perf_sample_data_init) */
		s->period = data->period;
		memcpy(s->counters, counters, pc->nr_counters * sizeof(u64));
		if (nr_ips)
			memcpy(s->counters + pc->nr_counters, pc->ips,
			       nr_ips * sizeof(u64));
		pc->samples++;
	} else {
		pc->pending_lost++;
		pc->lost++;
		WRITE_ONCE(pc->ctrl->lost, pc->lost);
	}

	if (pc->head != head0) {
		pc->last_ns = t0;
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

/*
 * May the overflow handler read @ev, a counting event made from @attr for
 * @cpu?  strobe_read_counter() calls ->pmu->read() from the handler, which
 * runs in NMI (x86 PMI), hard IRQ (hrtimer, arm64 PMU IRQ) or, arm64 with
 * pseudo-NMI, NMI again.  It may interrupt anything on this CPU, including
 * the PMU driver itself holding its own locks, so ->read() must take no lock,
 * do no I/O that can block or fault, and cope with being nested inside an
 * update of the same event.  That holds for (kernel/events/ and the drivers
 * as of 6.1):
 *
 *  - the CPU's own hardware PMU, the one PMU with task_ctx_nr ==
 *    perf_hw_context (x86 "cpu", "cpu_core"/"cpu_atom"; arm64 arm_pmu).
 *    x86_pmu_read() -> x86_perf_event_update() and armpmu_read() ->
 *    armpmu_event_update() publish the raw value with local64_cmpxchg() on
 *    hwc->prev_count in a retry loop ("an NMI might modify the previous
 *    event value") and are what the PMI handler itself runs.  Intel's
 *    auto-reload read (intel_pmu_auto_reload_read(), draining PEBS) is only
 *    for precise sampling events; counting events cannot set precise_ip.
 *  - software events, PERF_TYPE_SOFTWARE on perf_swevent (page-faults,
 *    context-switches, cpu-migrations, ...): perf_swevent_read() is empty,
 *    ->count is a local64_t that perf_swevent_event() bumps with local64_add()
 *    on the event's CPU, a single instruction (x86) or atomic (arm64).
 *  - tracepoints (perf_tracepoint): the same empty ->read
 *    (perf_swevent_read), counted through perf_tp_event() ->
 *    perf_swevent_event().  (Breakpoints would qualify too, ->read is the
 *    empty hw_breakpoint_pmu_read(), but strobe_get_attr() refuses bp_type.)
 *  - cpu-clock: cpu_clock_event_read() -> cpu_clock_event_update(), which
 *    is local_clock() (NMI-safe), local64_xchg() and local64_add().
 *
 * Refused:
 *  - task-clock: task_clock_event_read() computes ctx->time + (perf_clock() -
 *    ctx->timestamp), two fields that update_context_time() stores one after
 *    the other under ctx->lock; read between the stores, the delta is
 *    counted twice, and local64_xchg() on prev_count makes it permanent.
 *  - every other PMU: uncore, package and device PMUs read under spinlocks
 *    or through PCI config space (pci_lock), e.g. Intel uncore PCI boxes,
 *    arm_dsu (dsu_pmu_read_counter() takes dsu_pmu->pmu_lock), i915; and
 *    PMUs that count per package move the event to one CPU of the package
 *    in ->event_init (event->cpu = box->cpu), where this CPU's handler never
 *    sees it active.  The module cannot vouch for a PMU it does not know,
 *    so it trusts none (msr, kprobe and uprobe included).
 *
 * The type and config are the caller's (@attr): perf may rewrite
 * ev->attr.type (cpu-clock gets its PMU's dynamic type on newer kernels).
 */
static bool strobe_counter_readable(const struct perf_event_attr *attr,
				    struct perf_event *ev, int cpu)
{
	if (ev->cpu != cpu)
		return false;
	switch (attr->type) {
	case PERF_TYPE_SOFTWARE:
		return ev->pmu->task_ctx_nr == perf_sw_context &&
		       attr->config != PERF_COUNT_SW_TASK_CLOCK;
	case PERF_TYPE_TRACEPOINT:
		return ev->pmu->type == attr->type &&
		       ev->pmu->task_ctx_nr == perf_sw_context;
	}
#if defined(CONFIG_X86) || defined(CONFIG_ARM64)
	return ev->pmu->task_ctx_nr == perf_hw_context;
#else
	return false;	/* not audited on this architecture */
#endif
}

static void strobe_release_events(struct perf_event **ev, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (ev[i])
			perf_event_release_kernel(ev[i]);
		ev[i] = NULL;
	}
}

/*
 * Create the events of @pc's CPU into @ev: the counting events, then the
 * sampling event last (its handler reads the others), all disabled.  On
 * -EOPNOTSUPP, *@refused is 1 + the index of the counting event that the
 * handler cannot read.  Nothing is installed in @pc.
 */
static int strobe_create_events(struct strobe_cpu *pc, struct perf_event **ev,
				u32 *refused)
{
	struct strobe_sess *sess = pc->sess;
	struct perf_event *e;
	unsigned int i;
	int ret;

	for (i = 0; i < pc->nr_counters; i++) {
		e = perf_event_create_kernel_counter(&sess->cattrs[i], pc->cpu,
						     NULL, NULL, NULL);
		if (IS_ERR(e)) {
			ret = PTR_ERR(e);
			goto err;
		}
		ev[1 + i] = e;
		if (!strobe_counter_readable(&sess->cattrs[i], e, pc->cpu)) {
			*refused = i + 1;
			ret = -EOPNOTSUPP;
			goto err;
		}
	}
	e = perf_event_create_kernel_counter(&sess->sattr, pc->cpu, NULL,
					     strobe_overflow, pc);
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto err;
	}
	ev[0] = e;
	if (e->cpu != pc->cpu) {	/* its handler would run elsewhere */
		ret = -EINVAL;
		goto err;
	}
	return 0;

err:
	strobe_release_events(ev, 1 + pc->nr_counters);
	return ret;
}

/*
 * Write a record of @type (0: none, just a pending LOST) from process
 * context.  The caller is the ring's only producer: sess->lock is held and
 * this CPU's sampling event is disabled or gone, so strobe_overflow() does
 * not run for @pc.
 */
static void strobe_emit(struct strobe_cpu *pc, u16 type, u64 time)
{
	struct strobe_cpu_rec *r;
	u64 head0 = pc->head;
	u64 free = strobe_ring_free(pc);

	strobe_put_lost(pc, &free, time);
	if (type && !pc->pending_lost) {
		r = strobe_ring_reserve(pc, &free, sizeof(*r));
		if (r) {
			r->hdr.type = type;
			r->hdr.size = sizeof(*r);
			r->hdr.cpu = pc->cpu;
			r->time_ns = time;
		}
	} else {
		r = NULL;
	}
	if (type && !r) {
		pc->pending_lost++;
		pc->lost++;
		WRITE_ONCE(pc->ctrl->lost, pc->lost);
	}
	if (pc->head != head0) {
		pc->last_ns = time;
		smp_wmb(); /* B: the records before head */
		WRITE_ONCE(pc->ctrl->head, pc->head);
	}
}

/*
 * The CPU of @pc went down since its events were made: they are dead.
 * Write the OFFLINE record, release them, and keep what the counters
 * counted so that the totals go on from there when the CPU comes back.
 */
static void strobe_cpu_down(struct strobe_cpu *pc)
{
	struct perf_event *ev[1 + STROBE_MAX_COUNTERS];
	u64 enabled, running;
	unsigned int i;

	/*
	 * After this the handler does not run for @pc: the event is either
	 * stopped on its CPU (the cross-call ran), or the CPU is gone, which
	 * it is only after perf_event_exit_cpu() took the event off the CPU.
	 * Kernels that keep per-CPU events across hotplug find it disabled.
	 */
	perf_event_disable(pc->sample_ev);
	strobe_emit(pc, STROBE_REC_CPU_OFFLINE,
		    max(READ_ONCE(pc->offline_ns), pc->last_ns));
	pc->nr_offline++;

	ev[0] = pc->sample_ev;
	pc->sample_ev = NULL;
	for (i = 0; i < pc->nr_counters; i++) {
		ev[1 + i] = pc->counter_ev[i];
		pc->counter_ev[i] = NULL;
		pc->counter_base[i] += perf_event_read_value(ev[1 + i], &enabled,
							     &running);
	}
	strobe_release_events(ev, 1 + pc->nr_counters);
}

/*
 * Give the CPU of @pc new events, enabled if the session runs.  They are
 * created without the hotplug lock (creating a software event takes it
 * through static_key_slow_inc(), and it is not recursive), then installed
 * under it if the CPU stayed up meanwhile: hp_gen unchanged, so none of our
 * callbacks ran, and cpu_online() under the lock means the whole bring-up
 * is done.  Otherwise they are dropped; the callback that bumped hp_gen has
 * queued the work again.  @hotplug: write an ONLINE record (not at CONFIG).
 */
static int strobe_cpu_up(struct strobe_cpu *pc, bool hotplug, u32 *refused)
{
	struct perf_event *ev[1 + STROBE_MAX_COUNTERS] = { NULL };
	int gen = atomic_read(&pc->hp_gen);
	unsigned int i;
	bool up;
	int ret;

	ret = strobe_create_events(pc, ev, refused);
	if (ret)
		return ret;

	cpus_read_lock();
	up = cpu_online(pc->cpu) && atomic_read(&pc->hp_gen) == gen;
	if (up) {
		/* The handler does not run yet: the new events are disabled. */
		pc->sample_ev = ev[0];
		for (i = 0; i < pc->nr_counters; i++)
			pc->counter_ev[i] = ev[1 + i];
		pc->ev_gen = gen;
		if (hotplug) {
			strobe_emit(pc, STROBE_REC_CPU_ONLINE,
				    max(ktime_get_mono_fast_ns(), pc->last_ns));
			pc->nr_online++;
		}
		if (pc->sess->running) {
			for (i = 0; i < pc->nr_counters; i++)
				perf_event_enable(pc->counter_ev[i]);
			perf_event_enable(pc->sample_ev);
		}
	}
	cpus_read_unlock();
	if (!up) {
		strobe_release_events(ev, 1 + pc->nr_counters);
		return -ENODEV;
	}
	return 0;
}

static void strobe_cpu_sync(struct strobe_cpu *pc)
{
	u32 refused = 0;
	int ret;

	if (pc->sample_ev && atomic_read(&pc->hp_gen) != pc->ev_gen)
		strobe_cpu_down(pc);
	if (pc->sample_ev || !cpu_online(pc->cpu))
		return;
	ret = strobe_cpu_up(pc, true, &refused);
	if (ret && ret != -ENODEV)
		pr_warn_ratelimited("CPU %d is back online but cannot be sampled: %d\n",
				    pc->cpu, ret);
}

/* Process context, queued by the cpuhp callbacks below. */
static void strobe_hotplug_work(struct work_struct *work)
{
	struct strobe_sess *sess = container_of(work, struct strobe_sess, hp_work);
	unsigned int cpu;

	mutex_lock(&sess->lock);
	if (sess->configured)
		for (cpu = 0; cpu < nr_cpu_ids; cpu++)
			if (sess->cpus[cpu])
				strobe_cpu_sync(sess->cpus[cpu]);
	mutex_unlock(&sess->lock);
}

/*
 * cpuhp callbacks of a session, on the CPU coming up or going down, under
 * the hotplug lock.  They must not create or release events (static keys
 * take the hotplug lock) nor take sess->lock (its holders create events),
 * so they only note the change for strobe_hotplug_work().  sess->cpus is
 * stable: the instance is added after it is set up and removed before it
 * is freed.  Our state is CPUHP_AP_ONLINE_DYN, above CPUHP_AP_PERF_ONLINE:
 * the perf context of the CPU is up when online runs, and still up when
 * offline runs.
 */
static int strobe_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct strobe_sess *sess = hlist_entry(node, struct strobe_sess, hp_node);
	struct strobe_cpu *pc = sess->cpus[cpu];

	if (pc) {
		atomic_inc(&pc->hp_gen);
		queue_work(system_unbound_wq, &sess->hp_work);
	}
	return 0;
}

static int strobe_cpu_offline(unsigned int cpu, struct hlist_node *node)
{
	struct strobe_sess *sess = hlist_entry(node, struct strobe_sess, hp_node);
	struct strobe_cpu *pc = sess->cpus[cpu];

	if (pc) {
		WRITE_ONCE(pc->offline_ns, ktime_get_mono_fast_ns());
		atomic_inc(&pc->hp_gen);
		queue_work(system_unbound_wq, &sess->hp_work);
	}
	return 0;
}

static void strobe_free_cpu(struct strobe_cpu *pc)
{
	strobe_release_events(&pc->sample_ev, 1);
	strobe_release_events(pc->counter_ev, pc->nr_counters);
	/* Events are gone: no handler can queue the irq_work any more. */
	irq_work_sync(&pc->wake_work);
	vfree(pc->ring);
	kfree(pc->ips);
	kfree(pc->ktrace);
	kfree(pc);
}

static void strobe_teardown(struct strobe_sess *sess)
{
	unsigned int cpu;

	/* No callback of ours runs after this; a queued work finds nothing. */
	if (sess->hp_added) {
		cpuhp_state_remove_instance_nocalls(strobe_hp_state, &sess->hp_node);
		sess->hp_added = false;
	}
	sess->configured = false;
	sess->running = false;
	if (!sess->cpus)
		return;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (sess->cpus[cpu])
			strobe_free_cpu(sess->cpus[cpu]);
	kfree(sess->cpus);
	sess->cpus = NULL;
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

static int strobe_alloc_cpu(struct strobe_sess *sess, int cpu)
{
	struct strobe_cpu *pc;

	pc = kzalloc(sizeof(*pc), GFP_KERNEL);
	if (!pc)
		return -ENOMEM;
	pc->cpu = cpu;
	pc->sess = sess;
	pc->nr_counters = sess->nr_counters;
	pc->data_size = sess->data_size;
	pc->watermark = sess->data_size / 4;
	atomic_set(&pc->hp_gen, 0);
	init_irq_work(&pc->wake_work, strobe_wake);
	sess->cpus[cpu] = pc;		/* freed by strobe_teardown() on error */

	pc->ring = vmalloc_user(PAGE_SIZE + (size_t)pc->data_size);
	if (!pc->ring)
		return -ENOMEM;
	pc->ctrl = pc->ring;
	pc->data = (u8 *)pc->ring + PAGE_SIZE;
	pc->ctrl->data_size = pc->data_size;
	pc->ctrl->watermark = pc->watermark;
	pc->ctrl->page_size = PAGE_SIZE;
	pc->ctrl->abi_version = STROBE_ABI_VERSION;

	if (sess->flags & STROBE_CONFIG_CALLCHAIN) {
		pc->ips = kcalloc(STROBE_CHAIN_MAX, sizeof(*pc->ips), GFP_KERNEL);
		if (!pc->ips)
			return -ENOMEM;
#if defined(CONFIG_ARM64)
		pc->ktrace = kcalloc(STROBE_KTRACE_MAX, sizeof(*pc->ktrace),
				     GFP_KERNEL);
		if (!pc->ktrace)
			return -ENOMEM;
#endif
	}
	return 0;
}

static long strobe_ioc_config(struct strobe_sess *sess,
			      struct strobe_config __user *ucfg)
{
	struct strobe_config cfg;
	cpumask_var_t mask;
	u32 refused = 0;
	unsigned int i;
	int cpu, ret;

	if (copy_from_user(&cfg, ucfg, sizeof(cfg)))
		return -EFAULT;
	if (cfg.size != sizeof(cfg))
		return -EINVAL;
	if (sess->configured)
		return -EBUSY;
	if (cfg.flags & ~STROBE_CONFIG_CALLCHAIN)
		return -EINVAL;
	if ((cfg.flags & STROBE_CONFIG_CALLCHAIN) && !STROBE_HAVE_CALLCHAIN)
		return -EOPNOTSUPP;
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

	ret = strobe_get_attr(&sess->sattr, cfg.sample_attr, cfg.attr_size, true);
	if (ret)
		return ret;
	for (i = 0; i < cfg.nr_counters; i++) {
		ret = strobe_get_attr(&sess->cattrs[i],
				      cfg.counter_attrs + (u64)i * cfg.attr_size,
				      cfg.attr_size, false);
		if (ret)
			return ret;
	}

	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	for (i = 0; i < STROBE_NR_MASK_CPUS; i++) {
		if (!(cfg.cpu_mask[i / 64] & (1ULL << (i % 64))))
			continue;
		if (i >= nr_cpu_ids || !cpu_online(i)) {
			ret = -EINVAL;
			goto out_mask;
		}
		cpumask_set_cpu(i, mask);
	}
	if (cpumask_empty(mask))
		cpumask_copy(mask, cpu_online_mask);

	sess->cpus = kcalloc(nr_cpu_ids, sizeof(*sess->cpus), GFP_KERNEL);
	if (!sess->cpus) {
		ret = -ENOMEM;
		goto out_mask;
	}
	sess->nr_counters = cfg.nr_counters;
	sess->data_size = cfg.buffer_pages * PAGE_SIZE;
	sess->flags = cfg.flags;
	for_each_cpu(cpu, mask) {
		ret = strobe_alloc_cpu(sess, cpu);
		if (ret)
			goto out_teardown;
	}

	/*
	 * From here on, every CPU that goes down or comes up bumps its hp_gen
	 * and queues the work, which waits for sess->lock.  Events are made
	 * without the hotplug lock held (see strobe_cpu_up()): a CPU that
	 * went down since the check above just stays without events until it
	 * is back.
	 */
	ret = cpuhp_state_add_instance_nocalls(strobe_hp_state, &sess->hp_node);
	if (ret)
		goto out_teardown;
	sess->hp_added = true;
	for_each_cpu(cpu, mask) {
		struct strobe_cpu *pc = sess->cpus[cpu];

		ret = strobe_cpu_up(pc, false, &refused);
		if (ret == -ENODEV) {	/* went down: the work brings it up */
			strobe_emit(pc, STROBE_REC_CPU_OFFLINE,
				    ktime_get_mono_fast_ns());
			pc->nr_offline++;
			ret = 0;
		}
		if (ret)
			goto out_teardown;
	}
	smp_store_release(&sess->configured, true); /* pairs with poll, mmap */
	goto out_mask;

out_teardown:
	strobe_teardown(sess);
	if (ret == -EOPNOTSUPP && refused && put_user(refused, &ucfg->refused))
		ret = -EFAULT;
out_mask:
	free_cpumask_var(mask);
	return ret;
}

/*
 * After its sampling event is stopped, hand a pending loss count to the
 * consumer, so that drops at the end of a session are reported in-band and
 * not only in ctrl->lost.
 */
static void strobe_flush_lost(struct strobe_cpu *pc)
{
	if (pc->pending_lost)
		strobe_emit(pc, 0, max(ktime_get_mono_fast_ns(), pc->last_ns));
}

static void strobe_stop(struct strobe_sess *sess)
{
	unsigned int cpu, i;
	struct strobe_cpu *pc;

	/*
	 * Sampling events first, on every CPU: perf_event_disable() returns
	 * after the event is stopped on its CPU (cross-call; hrtimer events
	 * cancel their timer synchronously), so no handler reads a counter
	 * that is being disabled below, and strobe_flush_lost() is the only
	 * producer.  A CPU that is down has no events, or dead ones.
	 */
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		pc = sess->cpus[cpu];
		if (pc && pc->sample_ev)
			perf_event_disable(pc->sample_ev);
	}
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		pc = sess->cpus[cpu];
		if (pc)
			strobe_flush_lost(pc);
	}
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		pc = sess->cpus[cpu];
		if (!pc || !pc->sample_ev)
			continue;
		for (i = 0; i < pc->nr_counters; i++)
			perf_event_disable(pc->counter_ev[i]);
	}
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
	/* A CPU that comes up from now on is enabled by strobe_cpu_up(). */
	sess->running = true;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		pc = sess->cpus[cpu];
		if (!pc || !pc->sample_ev)
			continue;
		for (i = 0; i < pc->nr_counters; i++)
			perf_event_enable(pc->counter_ev[i]);
	}
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		pc = sess->cpus[cpu];
		if (pc && pc->sample_ev)
			perf_event_enable(pc->sample_ev);
	}

	/* Pinned events that could not get a counter are in ERROR state. */
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		pc = sess->cpus[cpu];
		if (!pc || !pc->sample_ev)
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
			/*
			 * 64-bit loads of handler-owned counters: no tearing
			 * on 64-bit; values may be one sample apart.
			 */
			cs.samples = READ_ONCE(pc->samples);
			cs.lost = READ_ONCE(pc->lost);
			cs.handler_ns_total = READ_ONCE(pc->handler_ns_total);
			cs.handler_ns_max = READ_ONCE(pc->handler_ns_max);
			cs.offline = pc->nr_offline;
			cs.online = pc->nr_online;
			/*
			 * Process context: perf_event_read_value() may IPI
			 * the event's CPU and sleep on the context mutex.
			 * sess->lock keeps the events from being replaced.
			 */
			cs.nr_counters = pc->nr_counters;
			for (i = 0; i < pc->nr_counters; i++) {
				cs.counters[i] = pc->counter_base[i];
				if (pc->counter_ev[i])
					cs.counters[i] +=
						perf_event_read_value(pc->counter_ev[i],
								      &enabled, &running);
			}
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
	INIT_WORK(&sess->hp_work, strobe_hotplug_work);
	file->private_data = sess;
	return nonseekable_open(inode, file);
}

static int strobe_release(struct inode *inode, struct file *file)
{
	struct strobe_sess *sess = file->private_data;

	/*
	 * No ioctl runs any more.  Stop the cpuhp callbacks first, then wait
	 * for the work they queued, which takes sess->lock.
	 */
	if (sess->hp_added) {
		cpuhp_state_remove_instance_nocalls(strobe_hp_state, &sess->hp_node);
		sess->hp_added = false;
	}
	cancel_work_sync(&sess->hp_work);

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
		ret = strobe_ioc_config(sess, (struct strobe_config __user *)uarg);
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
 * mmap: CPU c's ring lives at offset c * (PAGE_SIZE + data_size): one
 * control page, then the records.  A mapping is exactly the control page,
 * exactly the records, or exactly the whole ring of one CPU; anything else
 * (a consumer that got the page size wrong, for one) is -EINVAL.  Mappings
 * that include record pages are read-only (and may never become writable);
 * the control page mapped alone may be writable, so the consumer can store
 * ->tail.
 *
 * No sess->lock here: ->mmap runs under mmap_lock, and the ioctls fault on
 * user memory (mmap_lock) with sess->lock held; taking it here would be an
 * ABBA deadlock.  Once configured, ->data_size, ->cpus and the rings are
 * fixed until ->release(), which cannot run while mmap() holds the file;
 * hotplug changes a CPU's events, never its ring.
 */
static int strobe_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct strobe_sess *sess = file->private_data;
	unsigned long npages = vma_pages(vma);
	unsigned long data_pages, ring_pages, cpu, pgoff;
	struct strobe_cpu *pc;

	if (!smp_load_acquire(&sess->configured))	/* pairs with CONFIG */
		return -EINVAL;
	data_pages = sess->data_size >> PAGE_SHIFT;
	ring_pages = 1 + data_pages;
	cpu = vma->vm_pgoff / ring_pages;
	pgoff = vma->vm_pgoff % ring_pages;
	if (cpu >= nr_cpu_ids)
		return -EINVAL;
	if (!(pgoff == 0 && npages == 1) &&
	    !(pgoff == 1 && npages == data_pages) &&
	    !(pgoff == 0 && npages == ring_pages))
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
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
	.llseek		= no_llseek,	/* 6.12: FMODE_LSEEK unset is enough */
#endif
};

static struct miscdevice strobe_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "strobe",
	.fops	= &strobe_fops,
	.mode	= 0600,
};

static int __init strobe_init(void)
{
	int ret;

	/* strobe_ring_reserve(): the largest record fits in the smallest ring */
	BUILD_BUG_ON(STROBE_REC_MAX_SIZE >= 4096);
	BUILD_BUG_ON(STROBE_CHAIN_MAX > STROBE_MAX_IPS);

	ret = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "strobe:online",
				      strobe_cpu_online, strobe_cpu_offline);
	if (ret < 0)
		return ret;
	strobe_hp_state = ret;
	ret = misc_register(&strobe_misc);
	if (ret)
		goto err_hp;
	return 0;

err_hp:
	cpuhp_remove_multi_state(strobe_hp_state);
	return ret;
}

static void __exit strobe_exit(void)
{
	misc_deregister(&strobe_misc);
	cpuhp_remove_multi_state(strobe_hp_state);
}

module_init(strobe_init);
module_exit(strobe_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("strobe system-wide sampling driver");
