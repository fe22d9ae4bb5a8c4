/*
 * unwind.c - user call stacks from sampled registers and stack copies
 * (unwind.h), with elfutils libdw.
 *
 * Per process, a Dwfl of the binaries its executable mappings name, each
 * reported at the load bias its mapping implies, attached to callbacks
 * that give libdw one thread (the sample's registers) and memory (the
 * stack copy, else the mapped binaries' file contents).  libdw then walks
 * the frames with the binaries' CFI.
 *
 * libdw falls back on an architecture's own heuristics (frame pointers on
 * x86_64 and aarch64) where no CFI covers an address; a caller found that
 * way may be made up (a binary built without frame pointers keeps
 * anything in them), so every frame is checked: a frame is kept only if
 * the CFI of the frame below it covers that frame's address.  Where the
 * walk stops, the same lookups say why (enum unwind_result).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#if defined(__x86_64__) || defined(__aarch64__)
#include <asm/perf_regs.h>
#endif
#include "unwind.h"

/* Processes whose Dwfl is kept, and the files they may hold open
 * together (each module keeps its binary's fd); the least recently used
 * process is dropped first. */
#define UNWIND_MAX_PROCS	32
#define UNWIND_MAX_FILES	256
/* Distinct binaries reported per process. */
#define UNWIND_MAX_MODULES	UNWIND_MAX_FILES

#if defined(__x86_64__)
#define UNWIND_MACHINE		EM_X86_64
#define UNWIND_ABI		PERF_SAMPLE_REGS_ABI_64
#define UNWIND_PERF_SP		PERF_REG_X86_SP
#define UNWIND_PERF_IP		PERF_REG_X86_IP
/* DWARF register n (the x86_64 psABI's order) is perf register
 * dwarf_to_perf[n]: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip. */
static const int dwarf_to_perf[] = {
	PERF_REG_X86_AX, PERF_REG_X86_DX, PERF_REG_X86_CX, PERF_REG_X86_BX,
	PERF_REG_X86_SI, PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP,
	PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11,
	PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
	PERF_REG_X86_IP,
};
#define UNWIND_BUILT 1
#elif defined(__aarch64__)
#define UNWIND_MACHINE		EM_AARCH64
#define UNWIND_ABI		PERF_SAMPLE_REGS_ABI_64
#define UNWIND_PERF_SP		PERF_REG_ARM64_SP
#define UNWIND_PERF_IP		PERF_REG_ARM64_PC
/* x0-x30, sp: DWARF 0-31 are perf's 0-31; the pc has no DWARF number. */
static const int dwarf_to_perf[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
};
#define UNWIND_BUILT 1
#else
#define UNWIND_BUILT 0
#endif

/* The thread id given to libdw: any positive number (the process's own
 * may be 0, which libdw takes for "no more threads"). */
#define UNWIND_TID 1

struct umod {
	int64_t binary_id;
	uint64_t bias;		/* what the first mapping of it implies */
	int tried;		/* its file was looked at */
	Dwfl_Module *mod;	/* NULL: unreadable (no file, not an ELF of
				 * this machine, no segment at the mapping's
				 * offset, rejected by libdw) */
	struct unwinder *u;	/* for find_debuginfo */
};

/* What the CFI says at an address (uproc_cfi). */
#define UNWIND_MEMO_BITS	10
struct cfi_memo {
	uint64_t lookup;
	int64_t binary_id;	/* of the mapping at lookup, 0: none */
	uint8_t valid, result, signal, ra_undefined;
};

/* A process's Dwfl and, while a sample is unwound, that sample. */
struct uproc {
	uint32_t pid;
	uint64_t start_ns;
	uint64_t used;		/* unwinder clock at its last use */
	Dwfl *dwfl;		/* NULL: a free slot */
	int attached;		/* dwfl_attach_state done */
	struct map *maps;	/* the maps it was built from */
	size_t nr_maps;
	struct umod *mods;
	size_t nr_mods;
	size_t nr_files;	/* modules holding a file open */
	struct cfi_memo *memo;	/* 1 << UNWIND_MEMO_BITS, by address hash */

	/* the sample */
	Dwarf_Word regs[64];	/* by perf register number */
	uint64_t regs_have;	/* perf registers given */
	const unsigned char *stack;
	uint64_t stack_size, sp;
	int read_failed;	/* a memory read failed since the last frame */
};

struct unwinder {
	struct unwind_ops ops;
	Dwfl_Callbacks callbacks;
	struct uproc procs[UNWIND_MAX_PROCS];
	uint64_t clock;
	size_t nr_files;	/* in all procs */
};

/* The walk of one sample. */
struct walk {
	struct uproc *up;
	uint64_t *ips;
	size_t max, nr;
	int prev_signal;	/* the CFI of the frame below is a signal
				 * frame's: this frame's pc is exact */
	uint64_t prev_lookup;	/* the address the frame below is looked up at */
	enum unwind_result result;	/* when the walk was stopped by us */
	int64_t stop_binary;
	int stopped;
};

static int find_elf_none(Dwfl_Module *mod, void **userdata, const char *modname,
			 Dwarf_Addr base, char **file_name, Elf **elfp)
{
	/* every module is reported with its fd */
	*elfp = NULL;
	return -1;
}

/* Separate debug files only from ops->open_debug: never the file system
 * paths of the machine doing the ingest, never a debuginfod server. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct umod *m = *userdata;

	if (!m || !m->u->ops.open_debug)
		return -1;
	return m->u->ops.open_debug(m->u->ops.ctx, m->binary_id);
}

static int section_address_none(Dwfl_Module *mod, void **userdata, const char *modname,
				Dwarf_Addr base, const char *secname, GElf_Word shndx,
				const GElf_Shdr *shdr, Dwarf_Addr *addr)
{
	*addr = (Dwarf_Addr)-1;
	return 0;
}

struct unwinder *unwinder_new(const struct unwind_ops *ops, struct error *e)
{
	struct unwinder *u;

	if (!ops || !ops->open_binary) {
		error_set(e, "unwinder: no open_binary callback");
		return NULL;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		error_set(e, "unwinder: libelf: %s", elf_errmsg(-1));
		return NULL;
	}
	u = xcalloc(1, sizeof(*u));
	u->ops = *ops;
	u->callbacks.find_elf = find_elf_none;
	u->callbacks.find_debuginfo = find_debuginfo;
	u->callbacks.section_address = section_address_none;
	u->callbacks.debuginfo_path = NULL;
	return u;
}

static void uproc_clear(struct unwinder *u, struct uproc *up)
{
	if (up->dwfl)
		dwfl_end(up->dwfl);
	u->nr_files -= up->nr_files;
	free(up->maps);
	free(up->mods);
	free(up->memo);
	memset(up, 0, sizeof(*up));
}

void unwinder_free(struct unwinder *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < UNWIND_MAX_PROCS; i++)
		uproc_clear(u, &u->procs[i]);
	free(u);
}

void unwinder_forget(struct unwinder *u, uint32_t pid, uint64_t start_ns)
{
	size_t i;

	for (i = 0; i < UNWIND_MAX_PROCS; i++) {
		struct uproc *up = &u->procs[i];

		if (up->dwfl && up->pid == pid && up->start_ns == start_ns)
			uproc_clear(u, up);
	}
}

const char *unwind_result_name(enum unwind_result r)
{
	switch (r) {
	case UNWIND_OK: return "ok";
	case UNWIND_DEPTH: return "depth limit";
	case UNWIND_NO_CFI: return "no CFI";
	case UNWIND_NO_MAP: return "no mapping";
	case UNWIND_NO_BINARY: return "binary unreadable";
	case UNWIND_STACK: return "outside the stack copy";
	case UNWIND_NO_REGS: return "no registers";
	case UNWIND_FAILED: return "unwinder failed";
	case UNWIND_ERROR: break;
	}
	return "unwinding error";
}

#if UNWIND_BUILT

/* The mapping of up containing addr, or NULL. */
static const struct map *uproc_map(const struct uproc *up, uint64_t addr)
{
	size_t lo = 0, hi = up->nr_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct map *m = &up->maps[mid];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

static struct umod *uproc_mod(const struct uproc *up, int64_t binary_id)
{
	size_t i;

	for (i = 0; i < up->nr_mods; i++)
		if (up->mods[i].binary_id == binary_id)
			return &up->mods[i];
	return NULL;
}

/*
 * The load bias of the ELF at fd mapped at m: the PT_LOAD segment holding
 * file offset m->pgoff is at vaddr p_vaddr - p_offset + pgoff in the file's
 * layout and at m->start in the process.  -1 if fd is no ELF of this
 * machine or has no such segment.
 */
static int elf_bias(int fd, const struct map *m, uint64_t *bias)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t i, phnum;
	int pass, ret = -1;

	if (!elf)
		return -1;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_machine != UNWIND_MACHINE || gelf_getclass(elf) != ELFCLASS64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || elf_getphdrnum(elf, &phnum))
		goto out;
	/* an executable segment first: that is what the mappings are */
	for (pass = 0; pass < 2 && ret; pass++)
		for (i = 0; i < phnum && ret; i++) {
			GElf_Phdr ph;
			uint64_t align;

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD ||
			    (!(ph.p_flags & PF_X)) != pass)
				continue;
			/* the mapping starts at the page holding p_offset, with
			 * pages of at most p_align bytes (64 KB on some arm64) */
			align = ph.p_align >= 4096 && !(ph.p_align & (ph.p_align - 1)) ?
				ph.p_align : 4096;
			if (m->pgoff < (ph.p_offset & ~(align - 1)) ||
			    ph.p_filesz > UINT64_MAX - ph.p_offset ||
			    m->pgoff >= ph.p_offset + ph.p_filesz)
				continue;
			*bias = eh.e_type == ET_EXEC ? 0 :
				m->start - (ph.p_vaddr - ph.p_offset + m->pgoff);
			ret = 0;
		}
out:
	elf_end(elf);
	return ret;
}

/* Evict least recently used processes until want more files fit. */
static void unwinder_make_room(struct unwinder *u, const struct uproc *keep, size_t want)
{
	while (u->nr_files + want > UNWIND_MAX_FILES) {
		struct uproc *lru = NULL;
		size_t i;

		for (i = 0; i < UNWIND_MAX_PROCS; i++) {
			struct uproc *up = &u->procs[i];

			if (up->dwfl && up != keep && up->nr_files &&
			    (!lru || up->used < lru->used))
				lru = up;
		}
		if (!lru)
			return;
		uproc_clear(u, lru);
	}
}

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return UNWIND_TID;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	if (tid != UNWIND_TID)
		return false;
	*thread_argp = arg;
	return true;
}

/* Memory: the stack copy, else the file contents of a mapped binary. */
static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct uproc *up = arg;
	const struct map *m;
	const struct umod *um;

	if (addr >= up->sp && up->stack_size >= sizeof(*result) &&
	    addr - up->sp <= up->stack_size - sizeof(*result)) {
		memcpy(result, up->stack + (addr - up->sp), sizeof(*result));
		return true;
	}
	m = uproc_map(up, addr);
	if (m && m->end - addr >= sizeof(*result) &&
	    (um = uproc_mod(up, m->binary_id)) && um->mod) {
		Dwarf_Addr bias;
		Elf *elf = dwfl_module_getelf(um->mod, &bias);
		size_t size;
		char *raw = elf ? elf_rawfile(elf, &size) : NULL;
		uint64_t off = m->pgoff + (addr - m->start);

		if (raw && off >= m->pgoff && off <= size && size - off >= sizeof(*result)) {
			memcpy(result, raw + off, sizeof(*result));
			return true;
		}
	}
	up->read_failed = 1;
	return false;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct uproc *up = arg;
	size_t i;

	for (i = 0; i < sizeof(dwarf_to_perf) / sizeof(dwarf_to_perf[0]); i++) {
		int r = dwarf_to_perf[i];

		if ((up->regs_have >> r) & 1 &&
		    !dwfl_thread_state_registers(thread, (int)i, 1, &up->regs[r]))
			return false;
	}
	dwfl_thread_state_register_pc(thread, up->regs[UNWIND_PERF_IP]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

/* Build up's Dwfl from maps (p's, copied). */
static void uproc_build(struct unwinder *u, struct uproc *up, const struct proc *p)
{
	size_t i, nr = 0;

	up->pid = p->pid;
	up->start_ns = p->start_ns;
	up->nr_maps = p->nr_maps;
	up->maps = xmalloc((p->nr_maps ? p->nr_maps : 1) * sizeof(*up->maps));
	if (p->nr_maps)
		memcpy(up->maps, p->maps, p->nr_maps * sizeof(*up->maps));
	up->memo = xcalloc(1u << UNWIND_MEMO_BITS, sizeof(*up->memo));
	up->dwfl = dwfl_begin(&u->callbacks);
	if (!up->dwfl)
		return;
	/* one module per binary, at the bias of its first mapping */
	up->mods = xcalloc(UNWIND_MAX_MODULES, sizeof(*up->mods));
	for (i = 0; i < up->nr_maps && nr < UNWIND_MAX_MODULES; i++) {
		if (!uproc_mod(up, up->maps[i].binary_id)) {
			up->mods[nr].binary_id = up->maps[i].binary_id;
			up->mods[nr].u = u;
			up->nr_mods = ++nr;
		}
	}
	unwinder_make_room(u, up, nr);
	dwfl_report_begin(up->dwfl);
	for (i = 0; i < up->nr_maps; i++) {
		const struct map *m = &up->maps[i];
		struct umod *um = uproc_mod(up, m->binary_id);
		char name[64];
		void **userdata;
		int fd;

		if (!um || um->tried || u->nr_files >= UNWIND_MAX_FILES)
			continue;
		um->tried = 1;
		fd = u->ops.open_binary(u->ops.ctx, m->binary_id);
		if (fd < 0)
			continue;
		if (elf_bias(fd, m, &um->bias)) {
			close(fd);
			continue;
		}
		snprintf(name, sizeof(name), "binary %lld", (long long)m->binary_id);
		um->mod = dwfl_report_elf(up->dwfl, name, name, fd, um->bias, true);
		if (!um->mod) {
			close(fd);
			continue;
		}
		dwfl_module_info(um->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
		*userdata = um;
		up->nr_files++;
		u->nr_files++;
	}
	if (dwfl_report_end(up->dwfl, NULL, NULL))
		return;
	up->attached = dwfl_attach_state(up->dwfl, NULL, UNWIND_TID, &thread_callbacks, up);
}

/* The Dwfl of p's current maps. */
static struct uproc *unwinder_proc(struct unwinder *u, const struct proc *p)
{
	struct uproc *up = NULL, *lru = NULL;
	size_t i;

	for (i = 0; i < UNWIND_MAX_PROCS; i++) {
		struct uproc *x = &u->procs[i];

		if (x->dwfl && x->pid == p->pid && x->start_ns == p->start_ns) {
			up = x;
			break;
		}
		if (!lru || !x->dwfl || (lru->dwfl && x->used < lru->used))
			lru = x;
	}
	if (!up)
		up = lru;
	else if (up->nr_maps == p->nr_maps &&
		 (!p->nr_maps || !memcmp(up->maps, p->maps, p->nr_maps * sizeof(*p->maps))))
		goto done;
	uproc_clear(u, up);
	uproc_build(u, up, p);
done:
	up->used = ++u->clock;
	return up;
}

/*
 * What the CFI of up says at lookup (the address a frame is looked up
 * at), as libdw looks (.eh_frame, then .debug_frame): whether a rule
 * covers it (else why not), and then whether it is a signal frame's and
 * whether it leaves the return address undefined (the outermost frame).
 * Kept in up->memo: a process's stacks go through the same addresses.
 */
static const struct cfi_memo *uproc_cfi(struct uproc *up, uint64_t lookup)
{
	struct cfi_memo *c = &up->memo[(lookup * 0x9E3779B97F4A7C15ULL) >> (64 - UNWIND_MEMO_BITS)];
	const struct map *m;
	const struct umod *um;
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;
	Dwarf_Op ops_mem[3], *ops;
	size_t nops;
	bool signal = false;
	int ra;

	if (c->valid && c->lookup == lookup)
		return c;
	memset(c, 0, sizeof(*c));
	c->valid = 1;
	c->lookup = lookup;
	m = uproc_map(up, lookup);
	if (!m) {
		c->result = UNWIND_NO_MAP;
		return c;
	}
	c->binary_id = m->binary_id;
	um = uproc_mod(up, m->binary_id);
	if (!um || !um->mod) {
		c->result = UNWIND_NO_BINARY;
		return c;
	}
	cfi = dwfl_module_eh_cfi(um->mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, lookup - bias, &frame)) {
		cfi = dwfl_module_dwarf_cfi(um->mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, lookup - bias, &frame)) {
			c->result = UNWIND_NO_CFI;
			return c;
		}
	}
	c->result = UNWIND_OK;
	ra = dwarf_frame_info(frame, NULL, NULL, &signal);
	c->signal = signal;
	c->ra_undefined = ra >= 0 && !dwarf_frame_register(frame, ra, ops_mem, &ops, &nops) &&
			  nops == 0 && ops == ops_mem;
	free(frame);
	return c;
}

/* Check the frame below the current one (w->prev_lookup): its CFI must
 * exist, else the current frame was guessed.  0: fine, and *cp says more. */
static int walk_check_prev(struct walk *w, const struct cfi_memo **cp)
{
	const struct cfi_memo *c = uproc_cfi(w->up, w->prev_lookup);

	w->stop_binary = c->binary_id;
	if (c->result != UNWIND_OK) {
		w->result = c->result;
		w->stopped = 1;
		return -1;
	}
	w->prev_signal = c->signal;
	if (cp)
		*cp = c;
	return 0;
}

static int walk_frame(Dwfl_Frame *state, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;

	w->up->read_failed = 0;
	if (!dwfl_frame_pc(state, &pc, NULL)) {
		w->result = UNWIND_ERROR;
		w->stopped = 1;
		return DWARF_CB_ABORT;
	}
	if (w->nr && walk_check_prev(w, NULL))
		return DWARF_CB_ABORT;
	if (w->nr == w->max) {
		w->result = UNWIND_DEPTH;
		w->stopped = 1;
		return DWARF_CB_ABORT;
	}
	w->ips[w->nr] = pc;
	/* a return address is looked up inside its call instruction,
	 * unless the frame below was interrupted by a signal */
	w->prev_lookup = (!w->nr || w->prev_signal) ? pc : pc - 1;
	w->nr++;
	return DWARF_CB_OK;
}

/* Why the walk ended at its last frame: libdw found no caller (ret 0:
 * its return address is undefined or could not be computed) or failed
 * (-1). */
static enum unwind_result walk_end(struct walk *w, int ret)
{
	const struct cfi_memo *c;

	if (!w->nr)
		return UNWIND_ERROR;
	if (walk_check_prev(w, &c))
		return w->result;
	if (ret == 0 && c->ra_undefined)
		return UNWIND_OK;	/* the CFI says: no caller */
	return w->up->read_failed ? UNWIND_STACK : UNWIND_ERROR;
}

#endif /* UNWIND_BUILT */

enum unwind_result unwind_user(struct unwinder *u, const struct proc *p, uint32_t abi,
			       uint64_t regs_mask, const unsigned char *regs, uint32_t nr_regs,
			       const unsigned char *stack, uint64_t stack_size, uint64_t *ips,
			       size_t max, size_t *nr, int64_t *stop_binary)
{
#if UNWIND_BUILT
	struct uproc *up;
	struct walk w;
	uint32_t i, r;
	int ret;
#endif

	*nr = 0;
	*stop_binary = 0;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE || !nr_regs || !regs)
		return UNWIND_NO_REGS;
#if UNWIND_BUILT
	if (abi != UNWIND_ABI || (uint32_t)__builtin_popcountll(regs_mask) != nr_regs ||
	    !((regs_mask >> UNWIND_PERF_SP) & 1) || !((regs_mask >> UNWIND_PERF_IP) & 1))
		return UNWIND_ERROR;
	if (!max)
		return UNWIND_DEPTH;
	up = unwinder_proc(u, p);
	if (!up->attached) {
		/* no module could be reported: classify the IP alone */
		uint64_t ip = 0;

		for (i = r = 0; r < 64; r++)
			if ((regs_mask >> r) & 1) {
				if (r == UNWIND_PERF_IP)
					memcpy(&ip, regs + 8 * i, 8);
				i++;
			}
		ips[0] = ip;
		*nr = 1;
		if (!uproc_map(up, ip))
			return UNWIND_NO_MAP;
		*stop_binary = uproc_map(up, ip)->binary_id;
		return UNWIND_NO_BINARY;
	}
	up->regs_have = 0;
	for (i = r = 0; r < 64; r++) {
		if (!((regs_mask >> r) & 1))
			continue;
		memcpy(&up->regs[r], regs + 8 * (size_t)i, 8);
		up->regs_have |= 1ULL << r;
		i++;
	}
	up->stack = stack;
	up->stack_size = stack ? stack_size : 0;
	up->sp = up->regs[UNWIND_PERF_SP];
	up->read_failed = 0;
	memset(&w, 0, sizeof(w));
	w.up = up;
	w.ips = ips;
	w.max = max;
	ret = dwfl_getthread_frames(up->dwfl, UNWIND_TID, walk_frame, &w);
	*nr = w.nr;
	if (!w.stopped)
		w.result = walk_end(&w, ret);
	*stop_binary = w.result == UNWIND_OK ? 0 : w.stop_binary;
	up->stack = NULL;
	return w.result;
#else
	return UNWIND_ERROR;
#endif
}
