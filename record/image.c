/* SPDX-License-Identifier: MIT */
/*
 * The images of traced processes (see sampler_int.h, struct smp_image):
 * their address spaces, read again when a sample shows they are out of
 * date, kept alive by the samples taken in them, and what was sampled in
 * each: the files its sampled frames lie in go to the capture the first
 * time (capture.h), its JIT code to its process's list (emit_jit).  Each
 * step costs in proportion to the image's own maps and samples.  An image
 * that runs an interpreter (interp.h) has its reader, looked for at each
 * read of its maps, and when a fork's child gets a copy of them, until
 * found.
 */
#include "sampler_int.h"
#include "capture.h"
#include "dataformat.h"
#include "err.h"
#include "interp.h"
#include "jitmap.h"
#include "module.h"
#include "procfs.h"
#include "sorted.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct smp_image *smp_image_new(struct sampler *s, pid_t pid, bool execed)
{
	struct smp_image *img = xp_calloc(1, sizeof(*img));

	img->refs = 1;
	img->execed = execed;
	addrspace_init(&img->as, pid, s->queue.mc);
	return img;
}

struct smp_image *smp_image_get(struct smp_image *img)
{
	img->refs++;
	return img;
}

void smp_image_put(struct smp_image *img)
{
	if (!img || --img->refs)
		return;
	interp_free(img->interp);
	free(img->exe);
	addrspace_release(&img->as);
	xp_u64set_release(&img->stacks);
	free(img);
}

static long interp_read_live(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return (long)stackcopy_read(ctx, buf, len, addr);
}

struct interp_mem smp_interp_mem(struct sampler *s, struct xp_process *p,
				 const struct smp_image *img, const struct raw_sample *r)
{
	struct interp_mem m = {.ctx = &smp_proc_of(s, p)->mem};

	/* Nothing is read from the process for an image it left (exec) or once it exited. */
	if (!img->retired && !p->exited)
		m.read = interp_read_live;
	if (r) {
		m.stack_addr = xp_regs_get(&r->regs, s->arch->dwarf.sp);
		m.stack = r->copy;
		m.stack_len = r->len;
	}
	return m;
}

/*
 * Look for an interpreter in @img of @p, whose maps were just read, until
 * one is found: the runtime's file is mapped at the exec (python3) or
 * later (a launcher over libpython3.X.so, mapped by ld.so).  Costs a look
 * at each of its mappings' names; reads the process only where one is
 * named like a runtime.
 */
static void probe_interp(struct sampler *s, struct xp_process *p, struct smp_image *img)
{
	struct interp_mem m;

	if (s->o->no_interp || img->interp || img->interp_settled)
		return;
	m = smp_interp_mem(s, p, img, NULL);
	img->interp = interp_probe(&img->as, &m, p->pid, p->comm, &s->images.interp_next_id,
				   &img->interp_settled);
	if (img->interp)
		xp_debug(1, "pid %d runs %s: its frames are read", (int)p->pid,
			 interp_describe(img->interp));
}

void smp_image_fork(struct sampler *s, struct xp_process *p, struct smp_image *img,
		    const struct smp_image *parent)
{
	if (img->execed || img->forked || img->as.loads || img->as.nr || parent->retired ||
	    !parent->as.nr)
		return;
	/*
	 * Its mappings are the parent's, which the report looks up through
	 * the fork (doc/data-format.md): no MAPPING records of its own for
	 * them (a forking server's backend would write 40, 5.5 KB, twelve
	 * times the rest of what it costs the file).  Past the reader's limit
	 * of forks, they are written for it.
	 */
	img->fork_hops = parent->fork_hops < DF_FORK_HOPS_MAX ? parent->fork_hops + 1 : 0;
	addrspace_fork(&img->as, &parent->as, !img->fork_hops);
	img->forked = true;
	img->maps_loaded_at = parent->maps_loaded_at;
	/*
	 * A file mapped over a known one since is the parent's as well, and
	 * was looked for there: the child's first sample need not (one
	 * readlink, ~5 us, in each of a forking server's backends).
	 */
	img->stale_checked_at = parent->stale_checked_at;
	img->maps_hidden = parent->maps_hidden;
	/* The same executable: no readlink of its exe (3-8 us a process). */
	if (parent->exe && !img->exe)
		img->exe = xp_strdup(parent->exe);
	/*
	 * The same memory as the parent's: a Python parent makes a Python
	 * child.  One the parent's image refused was warned about there.
	 */
	if (parent->interp_settled && !parent->interp)
		img->interp_settled = true;
	else
		probe_interp(s, p, img);
}

int smp_image_read(struct sampler *s, struct xp_process *p, struct smp_image *img)
{
	char hint[512];
	int e;

	if (img->retired)
		return -ESRCH;
	e = addrspace_load(&img->as);
	s->st->maps_reads++;
	img->maps_loaded_at = smp_now(s);
	if (!e) {
		/*
		 * Maps just read name the files mapped now: no readlink of
		 * one at a sample in the next 20 ms (maps_stale), which each
		 * process's first sample after its exec paid.
		 */
		img->stale_checked_at = img->maps_loaded_at;
		probe_interp(s, p, img);
		return 0;
	}
	/* A process that is gone is not hidden. */
	if (procfs_explain_hidden(p->pid, -e, hint, sizeof(hint)))
		img->maps_hidden = true;
	if (!img->maps_hidden || s->images.maps_warned) {
		xp_debug(1, "cannot read the mappings of pid %d: %s", (int)p->pid, strerror(-e));
		return e;
	}
	s->images.maps_warned = true;
	xp_warn("cannot read the mappings of pid %d%s%s%s: %s; its frames will be addresses",
		(int)p->pid, p->comm[0] ? " (" : "", p->comm, p->comm[0] ? ")" : "", strerror(-e));
	if (hint[0])
		xp_hint("%s", hint);
	return e;
}

void smp_image_load(struct sampler *s, struct xp_process *p, struct smp_image *img, uint64_t t)
{
	if (!smp_image_read(s, p, img))
		emit_new_maps(s, p->pid, img, t);
}

/*
 * Whether the maps of @r's image may be read again for it.  Reading them
 * is ~50 us; a reload that did not help (a wild address, not a new
 * library) doubles the wait, up to a second, so a hostile stack cannot
 * make us read them per sample.  Until a reload has failed to help, maps
 * read before the sample was taken may be read again at once: the first
 * sample of a process can come within a millisecond of its exec, when the
 * maps read at the exec lack the libraries ld.so maps after it (its stack
 * stopped at main, once a run).
 */
bool smp_image_maps_due(struct sampler *s, const struct raw_sample *r)
{
	const struct smp_image *img = r->img;
	uint64_t wait = img->maps_backoff ? img->maps_backoff : 1000000ull;

	if (img->retired || r->proc->exited)
		return false;
	return smp_now(s) - img->maps_loaded_at >= wait ||
	       (img->maps_loaded_at < r->t && wait <= 1000000ull);
}

void smp_image_reloaded(struct smp_image *img, bool helped)
{
	if (helped || !img->maps_backoff)
		img->maps_backoff = 1000000ull;
	else if (img->maps_backoff < XP_NS_PER_SEC)
		img->maps_backoff *= 2;
}

/* Whether @pc is in anonymous executable memory (JIT code). */
static bool is_anon_code(const struct smp_image *img, uint64_t pc)
{
	const struct xp_map *m = addrspace_find(&img->as, pc);

	return m && !m->path[0];
}

/*
 * Whether @pc is JIT code and the maps are older than SAMPLER_JIT_MAPS_NS.
 * Maps read once, early, missed a jitdump mapped just after: with samples
 * only in the JIT's code they were never read again, and none of its
 * symbols were collected.
 */
static bool in_jit_code(struct sampler *s, const struct smp_image *img, uint64_t pc)
{
	return is_anon_code(img, pc) && smp_now(s) - img->maps_loaded_at >= SAMPLER_JIT_MAPS_NS;
}

/* Whether the file mapping holding @pc maps another file now (at most every 20 ms). */
static bool maps_stale(struct sampler *s, struct smp_image *img, uint64_t pc)
{
	uint64_t now = smp_now(s);

	if (now - img->stale_checked_at < 20000000ull)
		return false;
	img->stale_checked_at = now;
	return addrspace_is_stale(&img->as, pc);
}

/*
 * A pc outside every known executable mapping means something was mapped
 * since.  Inside one that now maps another file: a library was dlclose'd
 * and another dlopen'ed at its address; that check costs a readlink, so it
 * is made at most every 20 ms per image.  Inside anonymous executable
 * memory: JIT code, which the JIT describes in files it maps as it goes (a
 * jitdump, found through the maps when the process ends): maps older than
 * 100 ms are read again.
 */
void smp_image_check_pc(struct sampler *s, const struct raw_sample *r)
{
	struct smp_image *img = r->img;
	uint64_t pc = xp_regs_get(&r->regs, s->arch->dwarf.pc);

	if (smp_image_maps_due(s, r) && (!addrspace_is_exec(&img->as, pc) ||
					 maps_stale(s, img, pc) || in_jit_code(s, img, pc))) {
		smp_image_load(s, r->proc, img, r->t);
		smp_image_reloaded(img, addrspace_is_exec(&img->as, pc));
	}
	/* JIT code: date what the JIT's perf map gains (names valid at each sample's time). */
	if (!img->retired && is_anon_code(img, pc))
		jitmap_poll(&smp_proc_of(s, r->proc)->jit, r->proc->pid, &img->as, s->start_mono);
}

void smp_image_note_stack(struct sampler *s, struct xp_process *p, struct smp_image *img,
			  uint64_t id, const uint64_t *pcs, const uint8_t *flags, uint32_t nr)
{
	struct smp_proc *x;
	uint32_t i;

	if (!xp_u64set_add(&img->stacks, id))
		return;
	x = smp_proc_of(s, p);
	for (i = 0; i < nr; i++) {
		uint64_t pc;
		struct xp_map *m;

		if (flags[i] & XP_FRAME_MARKERS)
			continue;
		pc = xp_lookup_pc(pcs[i], flags[i]);
		m = addrspace_find(&img->as, pc);
		if (!m || !(m->prot & XP_PROT_EXEC))
			continue;
		if (!m->mod) {
			xp_grow((void **)&x->code_pcs, &x->code_alloc, x->ncode + 1,
				sizeof(*x->code_pcs));
			x->code_pcs[x->ncode++] = pc;
		} else if (!module_is_vdso(m->mod) && module_mark(m->mod)) {
			capture_add(&s->images.cap, m->mod, img->as.root);
		}
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

const uint64_t *smp_image_code_pcs(struct sampler *s, struct xp_process *p, size_t *nr)
{
	struct smp_proc *x = smp_proc_of(s, p);
	size_t i, k;

	xp_sort(x->code_pcs, x->ncode, sizeof(*x->code_pcs), cmp_u64);
	for (i = 0, k = 0; i < x->ncode; i++)
		if (!k || x->code_pcs[k - 1] != x->code_pcs[i])
			x->code_pcs[k++] = x->code_pcs[i];
	x->ncode = k;
	*nr = k;
	return x->code_pcs;
}

void smp_images_init(struct sampler *s)
{
	capture_init(&s->images.cap);
	s->images.interp_next_id = 1;
}

void smp_images_save(struct sampler *s, struct capture_stats *st)
{
	capture_save(&s->images.cap, st);
}

void smp_images_release(struct sampler *s)
{
	capture_release(&s->images.cap);
}
