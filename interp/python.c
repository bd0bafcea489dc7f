/* SPDX-License-Identifier: MIT */
/*
 * The CPython reader (interp_int.h), for CPython 3.11 to 3.14 built with
 * the GIL (the default build).
 *
 * Finding the runtime: a file named python* or libpython* that defines
 * _PyRuntime (or, stripped, has its .PyRuntime section, CPython 3.11 on)
 * and Py_Version (3.11 on).  3.13 and later put _Py_DebugOffsets at the
 * start of _PyRuntime: the cookie "xdebugpy", the version, and the offset
 * of every field an outside reader needs; every offset used here comes
 * from it (the table's own layout is per minor version, below).  3.11 and
 * 3.12 publish none: their offsets are in a table written from that
 * version's headers (Include/cpython/pystate.h, Include/internal/
 * pycore_frame.h, pycore_interp.h, pycore_runtime.h, Include/cpython/
 * code.h and unicodeobject.h; offsetof() of each field, x86-64 and the
 * other LP64 targets alike).  Whatever the source, the offsets are checked
 * against the sizes they must fit in at attach, a thread state must point
 * back at its interpreter, and a code object's type must be named "code":
 * a runtime that fails gives one warning and no frames.
 *
 * A thread's frames (3.11 on: _PyInterpreterFrame, in the thread's data
 * stack chunks, or in generator objects) are found from its thread state,
 * matched to the OS thread by native_thread_id.  In the stop: one read of
 * the thread state, one bulk copy of the current data-stack chunk up to
 * the innermost frame, and frames outside it one by one.  Each call of
 * the eval loop keeps something on its C stack: 3.11 a _PyCFrame (the
 * frames it runs end at one flagged is_entry), 3.12 on an entry frame in
 * the chain (owner 3: FRAME_OWNED_BY_CSTACK, 3.14 FRAME_OWNED_BY_
 * INTERPRETER).  Their addresses are the boundaries' markers (interp.h).
 */
#include "interp.h"
#include "interp_int.h"
#include "addrspace.h"
#include "err.h"
#include "hash.h"
#include "module.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PY_TS_MAX	1024	     /* bytes of a thread state read in the stop, at most */
#define PY_FRAME_MAX	256	     /* bytes of a frame read, at most */
#define PY_CODE_HDR_MAX 512	     /* bytes of a code object before its code, at most */
#define PY_WIN_MAX	(256u << 10) /* the bulk copy of a data-stack chunk, at most */
#define PY_STR_MAX	1024	     /* characters of a name or file kept */
#define PY_UNITS_MAX	(1u << 20)   /* code units of a code object, at most */
#define PY_TABLE_MAX	(1u << 20)   /* bytes of a line table, at most */
#define PY_THREADS_MAX	4096	     /* thread states looked at in one walk */
#define PY_INTERPS_MAX	64	     /* interpreters looked at in one walk */
#define PY_FRAMES_APART 64	     /* frames read one by one in a stop, at most */
#define PY_WIN_MORE	(16u << 10)  /* a copy for frames out of the first: what it ends at */
#define PY_WINS_MORE	64	     /* such copies in a stop, at most */
#define PY_OWNER_ENTRY	3	     /* 3.12 on: an owner this or above is no Python frame */
#define PY_MISS_WALK	4	     /* a thread not found: walk again at every 4th miss */

/* Where the fields this reader uses are, in bytes from the start of their structures. */
struct py_layout {
	unsigned int minor;
	/* _PyRuntimeState, PyInterpreterState */
	uint64_t rt_interp_head, is_next, is_threads_head;
	/* PyThreadState */
	uint64_t ts_next, ts_interp, ts_native_id, ts_frame, ts_chunk;
	bool ts_cframe; /* 3.11, 3.12: ts_frame points to a _PyCFrame */
	uint64_t cf_current, cf_previous;
	/* _PyInterpreterFrame */
	uint64_t fr_code, fr_previous, fr_ip, fr_owner, fr_read;
	int64_t fr_is_entry; /* 3.11; -1 */
	uint64_t code_mask;  /* clears the tag bits of f_executable (3.14: a _PyStackRef) */
	/* PyObject, PyVarObject, PyTypeObject */
	uint64_t ob_type, ob_size, tp_name;
	/* PyCodeObject: co_code is where co_code_adaptive starts */
	uint64_t co_firstlineno, co_filename, co_qualname, co_linetable, co_code;
	/* PyBytesObject, PyASCIIObject, PyCompactUnicodeObject */
	uint64_t by_data, us_length, us_state, us_ascii, us_compact;
};

/*
 * CPython 3.11 (Include/cpython/pystate.h struct _ts and _PyCFrame;
 * Include/internal/pycore_frame.h _PyInterpreterFrame; Include/cpython/
 * code.h _PyCode_DEF; Include/cpython/unicodeobject.h, with wstr).
 */
static const struct py_layout py311 = {
    .minor = 11,
    .rt_interp_head = 40,
    .is_next = 0,
    .is_threads_head = 16,
    .ts_next = 8,
    .ts_interp = 16,
    .ts_native_id = 160,
    .ts_frame = 56,
    .ts_chunk = 296,
    .ts_cframe = true,
    .cf_current = 8,
    .cf_previous = 16,
    .fr_code = 32,
    .fr_previous = 48,
    .fr_ip = 56,
    .fr_owner = 69,
    .fr_read = 72,
    .fr_is_entry = 68,
    .code_mask = ~0ull,
    .ob_type = 8,
    .ob_size = 16,
    .tp_name = 24,
    .co_firstlineno = 72,
    .co_filename = 112,
    .co_qualname = 128,
    .co_linetable = 136,
    .co_code = 184,
    .by_data = 32,
    .us_length = 16,
    .us_state = 32,
    .us_ascii = 48,
    .us_compact = 72,
};

/* CPython 3.12: the same headers; the frame starts with f_code, no wstr. */
static const struct py_layout py312 = {
    .minor = 12,
    .rt_interp_head = 40,
    .is_next = 0,
    .is_threads_head = 72,
    .ts_next = 8,
    .ts_interp = 16,
    .ts_native_id = 144,
    .ts_frame = 56,
    .ts_chunk = 232,
    .ts_cframe = true,
    .cf_current = 0,
    .cf_previous = 8,
    .fr_code = 0,
    .fr_previous = 8,
    .fr_ip = 56,
    .fr_owner = 70,
    .fr_read = 72,
    .fr_is_entry = -1,
    .code_mask = ~0ull,
    .ob_type = 8,
    .ob_size = 16,
    .tp_name = 24,
    .co_firstlineno = 68,
    .co_filename = 112,
    .co_qualname = 128,
    .co_linetable = 136,
    .co_code = 192,
    .by_data = 32,
    .us_length = 16,
    .us_state = 32,
    .us_ascii = 40,
    .us_compact = 56,
};

/*
 * Where each field of _Py_DebugOffsets is, as an index of 8-byte words
 * (the cookie is word 0), per minor version: Include/internal/
 * pycore_runtime.h (3.13) and pycore_debug_offsets.h (3.14).  The names
 * are those of the struct's fields.
 */
struct py_dbg_words {
	unsigned int minor, nwords;
	uint8_t version, free_threaded;
	uint8_t rt_size, rt_interp_head;
	uint8_t is_size, is_next, is_threads_head;
	uint8_t ts_size, ts_next, ts_interp, ts_current_frame, ts_native_id, ts_chunk;
	uint8_t fr_size, fr_previous, fr_executable, fr_instr_ptr, fr_owner;
	uint8_t co_size, co_filename, co_qualname, co_linetable, co_firstlineno, co_code;
	uint8_t ob_type, tp_size, tp_name;
	uint8_t by_size, by_ob_size, by_sval;
	uint8_t us_size, us_state, us_length, us_ascii_size;
};

static const struct py_dbg_words py_dbg[] = {
    {
	.minor = 13,
	.nwords = 73,
	.version = 1,
	.free_threaded = 2,
	.rt_size = 3,
	.rt_interp_head = 5,
	.is_size = 6,
	.is_next = 8,
	.is_threads_head = 9,
	.ts_size = 19,
	.ts_next = 21,
	.ts_interp = 22,
	.ts_current_frame = 23,
	.ts_native_id = 25,
	.ts_chunk = 26,
	.fr_size = 28,
	.fr_previous = 29,
	.fr_executable = 30,
	.fr_instr_ptr = 31,
	.fr_owner = 33,
	.co_size = 34,
	.co_filename = 35,
	.co_qualname = 37,
	.co_linetable = 38,
	.co_firstlineno = 39,
	.co_code = 43,
	.ob_type = 45,
	.tp_size = 46,
	.tp_name = 47,
	.by_size = 64,
	.by_ob_size = 65,
	.by_sval = 66,
	.us_size = 67,
	.us_state = 68,
	.us_length = 69,
	.us_ascii_size = 70,
    },
    {
	.minor = 14,
	.nwords = 95,
	.version = 1,
	.free_threaded = 2,
	.rt_size = 3,
	.rt_interp_head = 5,
	.is_size = 6,
	.is_next = 8,
	.is_threads_head = 9,
	.ts_size = 22,
	.ts_next = 24,
	.ts_interp = 25,
	.ts_current_frame = 26,
	.ts_native_id = 28,
	.ts_chunk = 29,
	.fr_size = 31,
	.fr_previous = 32,
	.fr_executable = 33,
	.fr_instr_ptr = 34,
	.fr_owner = 36,
	.co_size = 39,
	.co_filename = 40,
	.co_qualname = 42,
	.co_linetable = 43,
	.co_firstlineno = 44,
	.co_code = 48,
	.ob_type = 51,
	.tp_size = 52,
	.tp_name = 53,
	.by_size = 74,
	.by_ob_size = 75,
	.by_sval = 76,
	.us_size = 77,
	.us_state = 78,
	.us_length = 79,
	.us_ascii_size = 80,
    },
};

#define PY_DBG_WORDS_MAX 128

/* A thread state found for an OS thread. */
struct py_thread {
	pid_t tid;
	uint64_t ts;	 /* 0: none known */
	uint32_t misses; /* stops that found none since the last walk for it */
};

struct py_state {
	struct py_layout L;
	uint64_t runtime;	/* address of _PyRuntime */
	uint64_t code_type;	/* address of PyCode_Type, 0: not known yet */
	uint64_t ts_lo, ts_len; /* the part of a thread state read */
	struct py_thread *th;
	size_t nth;
	unsigned long alloc_th;
	uint8_t *win; /* the bulk copy of a stop: the current data-stack chunk */
	size_t win_cap;
	uint8_t *more; /* a copy for frames outside it (older chunks, generators) */
};

static uint64_t get64(const uint8_t *b, uint64_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

static uint32_t get32(const uint8_t *b, uint64_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

static int read64(const struct interp_mem *mem, uint64_t addr, uint64_t *v)
{
	return interp_read(mem, addr, v, 8);
}

static bool py_is_candidate(const struct xp_map *m)
{
	const char *base = strrchr(m->path, '/');

	base = base ? base + 1 : m->path;
	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9);
}

/* ---- attach ------------------------------------------------------------- */

/* Whether every field of @n offsets (each @width bytes) lies in a structure of @size bytes. */
static bool fits(uint64_t size, const uint64_t *offs, size_t n, uint64_t width)
{
	size_t i;

	if (!size || size > (1u << 22))
		return false;
	for (i = 0; i < n; i++)
		if (offs[i] > size || size - offs[i] < width)
			return false;
	return true;
}

/*
 * The layout from _Py_DebugOffsets at the start of _PyRuntime (3.13 on).
 * 0, or -errno after filling @why.
 */
static int py_layout_from_debug(struct py_layout *L, const struct interp_mem *mem, uint64_t runtime,
				uint32_t version, char *why, size_t whylen)
{
	const struct py_dbg_words *d = NULL;
	uint64_t w[PY_DBG_WORDS_MAX];
	size_t i;

	for (i = 0; i < sizeof(py_dbg) / sizeof(py_dbg[0]); i++)
		if (py_dbg[i].minor == ((version >> 16) & 0xff))
			d = &py_dbg[i];
	if (!d || interp_read(mem, runtime, w, d->nwords * 8)) {
		snprintf(why, whylen, "its _PyRuntime cannot be read");
		return -EFAULT;
	}
	if (memcmp(w, "xdebugpy", 8)) {
		snprintf(why, whylen, "its _PyRuntime does not start with the debug offsets");
		return -EINVAL;
	}
	if ((w[d->version] >> 16) != (version >> 16)) {
		snprintf(why, whylen, "its debug offsets are of version %#llx, Py_Version says %#x",
			 (unsigned long long)w[d->version], version);
		return -EINVAL;
	}
	if (w[d->free_threaded]) {
		snprintf(why, whylen, "a free-threaded build, whose frames xprof does not read");
		return -ENOTSUP;
	}
	*L = (struct py_layout){
	    .minor = d->minor,
	    .rt_interp_head = w[d->rt_interp_head],
	    .is_next = w[d->is_next],
	    .is_threads_head = w[d->is_threads_head],
	    .ts_next = w[d->ts_next],
	    .ts_interp = w[d->ts_interp],
	    .ts_native_id = w[d->ts_native_id],
	    .ts_frame = w[d->ts_current_frame],
	    .ts_chunk = w[d->ts_chunk],
	    .fr_code = w[d->fr_executable],
	    .fr_previous = w[d->fr_previous],
	    .fr_ip = w[d->fr_instr_ptr],
	    .fr_owner = w[d->fr_owner],
	    .fr_is_entry = -1,
	    /* 3.14's f_executable is a _PyStackRef: its low bits are tags. */
	    .code_mask = d->minor >= 14 ? ~7ull : ~0ull,
	    .ob_type = w[d->ob_type],
	    .ob_size = w[d->by_ob_size],
	    .tp_name = w[d->tp_name],
	    .co_firstlineno = w[d->co_firstlineno],
	    .co_filename = w[d->co_filename],
	    .co_qualname = w[d->co_qualname],
	    .co_linetable = w[d->co_linetable],
	    .co_code = w[d->co_code],
	    .by_data = w[d->by_sval],
	    .us_length = w[d->us_length],
	    .us_state = w[d->us_state],
	    .us_ascii = w[d->us_ascii_size],
	    /* PyCompactUnicodeObject: PyASCIIObject, utf8_length, utf8. */
	    .us_compact = w[d->us_ascii_size] + 16,
	};
	{
		const uint64_t rt[] = {L->rt_interp_head};
		const uint64_t is[] = {L->is_next, L->is_threads_head};
		const uint64_t ts[] = {L->ts_next, L->ts_interp, L->ts_native_id, L->ts_frame,
				       L->ts_chunk};
		const uint64_t fr[] = {L->fr_code, L->fr_previous, L->fr_ip};
		const uint64_t fr1[] = {L->fr_owner};
		const uint64_t co[] = {L->ob_type, L->ob_size, L->co_filename, L->co_qualname,
				       L->co_linetable};
		const uint64_t co4[] = {L->co_firstlineno};
		const uint64_t tp[] = {L->tp_name};
		const uint64_t by[] = {L->ob_size};
		const uint64_t us[] = {L->us_length};
		const uint64_t us4[] = {L->us_state};

		L->fr_read = w[d->fr_size] < PY_FRAME_MAX ? w[d->fr_size] : PY_FRAME_MAX;
		/*
		 * A code object's fields are read from its header (up to co_code),
		 * a str's from its PyASCIIObject (up to its data): each must lie there.
		 */
		if (!fits(w[d->rt_size], rt, 1, 8) || !fits(w[d->is_size], is, 2, 8) ||
		    !fits(w[d->ts_size], ts, 5, 8) || !fits(L->fr_read, fr, 3, 8) ||
		    !fits(L->fr_read, fr1, 1, 1) || L->co_code > w[d->co_size] ||
		    L->co_code > PY_CODE_HDR_MAX || !fits(L->co_code, co, 5, 8) ||
		    !fits(L->co_code, co4, 1, 4) || !fits(w[d->tp_size], tp, 1, 8) ||
		    !fits(w[d->by_size], by, 1, 8) || L->by_data >= w[d->by_size] ||
		    L->us_ascii > w[d->us_size] || L->us_ascii > 256 ||
		    !fits(L->us_ascii, us, 1, 8) || !fits(L->us_ascii, us4, 1, 4)) {
			snprintf(why, whylen, "its debug offsets do not fit the sizes they give");
			return -EINVAL;
		}
	}
	return 0;
}

/* The part of a thread state to read: every field used, in one piece. */
static void py_ts_span(struct py_state *ps)
{
	const struct py_layout *L = &ps->L;
	const uint64_t offs[] = {L->ts_next, L->ts_interp, L->ts_native_id, L->ts_frame,
				 L->ts_chunk};
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i;

	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		lo = offs[i] < lo ? offs[i] : lo;
		hi = offs[i] + 8 > hi ? offs[i] + 8 : hi;
	}
	ps->ts_lo = lo;
	ps->ts_len = hi - lo;
}

static int py_start(struct interp *ip, const struct interp_mem *mem, uint64_t runtime, uint32_t ver,
		    uint64_t code_type);

static int py_open(struct interp *ip, const struct addrspace *as, const struct xp_map *m,
		   const struct interp_mem *mem)
{
	struct module *mod = m->mod;
	uint64_t v0, bias, rt, rt_size, ver_at, ver_size, ver64 = 0, type, type_size;

	(void)as;
	if (module_vaddr(mod, m, m->start, &v0))
		return -ENOENT;
	bias = m->start - v0;
	if (module_any_symbol(mod, "_PyRuntime", &rt, &rt_size) &&
	    module_section(mod, ".PyRuntime", &rt, &rt_size))
		return -ENOENT;
	if (module_any_symbol(mod, "Py_Version", &ver_at, &ver_size) ||
	    read64(mem, ver_at + bias, &ver64)) {
		xp_warn("pid %d (%s) runs a Python older than 3.11 (no Py_Version), whose frames "
			"xprof does not read; its profile has native frames only",
			(int)ip->pid, ip->comm);
		return -ENOTSUP;
	}
	if (!module_any_symbol(mod, "PyCode_Type", &type, &type_size))
		type += bias;
	else
		type = 0;
	return py_start(ip, mem, rt + bias, (uint32_t)ver64, type);
}

/*
 * Start reading the runtime at @runtime of Py_Version @ver, whose code
 * type is at @code_type (0: not known).  0, or -errno after the warning.
 */
static int py_start(struct interp *ip, const struct interp_mem *mem, uint64_t runtime, uint32_t ver,
		    uint64_t code_type)
{
	unsigned int major = ver >> 24, minor = (ver >> 16) & 0xff;
	struct py_state *ps;
	struct py_layout L;
	char why[160];

	snprintf(ip->what, sizeof(ip->what), "python %u.%u.%u", major, minor, (ver >> 8) & 0xff);
	if (major != 3 || minor < 11 || minor > 14) {
		xp_warn("pid %d (%s) runs Python %u.%u, whose frames xprof does not read (it "
			"reads 3.11 to 3.14); its profile has native frames only",
			(int)ip->pid, ip->comm, major, minor);
		return -ENOTSUP;
	}
	if (minor == 11) {
		L = py311;
	} else if (minor == 12) {
		L = py312;
	} else if (py_layout_from_debug(&L, mem, runtime, ver, why, sizeof(why))) {
		xp_warn("pid %d (%s) runs Python %u.%u, but %s; its profile has native frames only",
			(int)ip->pid, ip->comm, major, minor, why);
		return -EINVAL;
	}
	ps = xp_calloc(1, sizeof(*ps));
	ps->L = L;
	ps->runtime = runtime;
	ps->code_type = code_type;
	py_ts_span(ps);
	if (ps->ts_len > PY_TS_MAX) {
		free(ps);
		xp_warn("pid %d (%s) runs Python %u.%u, but its thread state is laid out beyond "
			"what xprof reads; its profile has native frames only",
			(int)ip->pid, ip->comm, major, minor);
		return -EINVAL;
	}
	ip->priv = ps;
	xp_debug(1, "pid %d: %s, _PyRuntime at %#llx", (int)ip->pid, ip->what,
		 (unsigned long long)ps->runtime);
	return 0;
}

static void py_free(struct interp *ip)
{
	struct py_state *ps = ip->priv;

	if (!ps)
		return;
	free(ps->th);
	free(ps->win);
	free(ps->more);
	free(ps);
	ip->priv = NULL;
}

/* ---- threads ------------------------------------------------------------ */

static struct py_thread *py_thread(struct py_state *ps, pid_t tid, bool add)
{
	size_t i;

	for (i = 0; i < ps->nth; i++)
		if (ps->th[i].tid == tid)
			return &ps->th[i];
	if (!add)
		return NULL;
	if (ps->nth >= PY_THREADS_MAX)
		ps->nth = 0; /* threads come and go: start again */
	xp_grow((void **)&ps->th, &ps->alloc_th, ps->nth + 1, sizeof(*ps->th));
	ps->th[ps->nth] = (struct py_thread){.tid = tid};
	return &ps->th[ps->nth++];
}

/* Read the used part of the thread state at @ts into @b (ps->ts_len bytes, from ts_lo). */
static int py_read_ts(const struct py_state *ps, const struct interp_mem *mem, uint64_t ts,
		      uint8_t *b)
{
	if (!ts || (ts & 7))
		return -EFAULT;
	return interp_read(mem, ts + ps->ts_lo, b, ps->ts_len);
}

#define TS(ps, b, field) get64((b), (ps)->L.field - (ps)->ts_lo)

/*
 * Walk every interpreter's thread states and note which OS thread each
 * belongs to.  0, or -errno when the runtime holds nothing that makes
 * sense (not initialized yet, or not what it says).
 */
static int py_walk_threads(struct interp *ip, const struct interp_mem *mem)
{
	struct py_state *ps = ip->priv;
	uint64_t interp, ts;
	uint8_t b[PY_TS_MAX];
	unsigned int ni, n;

	if (read64(mem, ps->runtime + ps->L.rt_interp_head, &interp))
		return -EFAULT;
	for (ni = 0; interp && ni < PY_INTERPS_MAX; ni++) {
		if (read64(mem, interp + ps->L.is_threads_head, &ts))
			return -EFAULT;
		for (n = 0; ts && n < PY_THREADS_MAX; n++) {
			struct py_thread *t;
			uint64_t native;

			if (py_read_ts(ps, mem, ts, b) || TS(ps, b, ts_interp) != interp)
				return -EINVAL;
			native = TS(ps, b, ts_native_id);
			if (native && native <= INT32_MAX) {
				t = py_thread(ps, (pid_t)native, true);
				t->ts = ts;
			}
			ts = TS(ps, b, ts_next);
		}
		if (read64(mem, interp + ps->L.is_next, &interp))
			return -EFAULT;
	}
	return 0;
}

/* ---- the stop -------------------------------------------------------------- */

/* A bulk copy: @len bytes of the target from @addr at @b. */
struct py_win {
	uint64_t addr;
	size_t len;
	const uint8_t *b;
};

/* What a stop has copied: the chunk, the latest other copy, and how many were made. */
struct py_copies {
	struct py_win chunk, more;
	unsigned int nmore, apart;
};

static const uint8_t *py_in(const struct py_win *w, uint64_t addr, uint64_t n)
{
	uint64_t off = addr - w->addr;

	return addr >= w->addr && off < w->len && w->len - off >= n ? w->b + off : NULL;
}

/*
 * The frame at @frame: from the chunk's copy, the stack copy or the
 * latest other copy; else a new copy of the memory before it (up to
 * PY_WIN_MORE back, from a page: the older chunk it is in, or the
 * generator holding it), else read alone.
 */
static const uint8_t *py_frame(struct py_state *ps, const struct interp_mem *mem,
			       struct py_copies *c, uint64_t frame, uint8_t *buf,
			       struct interp_raw *raw)
{
	struct py_win stack = {mem->stack_addr, mem->stack_len, mem->stack};
	uint64_t n = ps->L.fr_read, lo, end = frame + n;
	const uint8_t *f;

	if ((f = py_in(&c->chunk, frame, n)) || (f = py_in(&stack, frame, n)) ||
	    (f = py_in(&c->more, frame, n)))
		return f;
	if (c->nmore < PY_WINS_MORE) {
		c->nmore++;
		if (!ps->more)
			ps->more = xp_malloc(PY_WIN_MORE);
		lo = (end > PY_WIN_MORE ? end - PY_WIN_MORE : 0) + 4095;
		lo &= ~4095ull;
		if (lo > frame)
			lo = frame & ~4095ull;
		/* Below the chunk (or object) may lie a hole: then from the frame's page. */
		if (interp_read(mem, lo, ps->more, (size_t)(end - lo)) &&
		    (lo = frame & ~4095ull, interp_read(mem, lo, ps->more, (size_t)(end - lo))))
			return NULL;
		c->more = (struct py_win){lo, (size_t)(end - lo), ps->more};
		raw->bytes += (uint32_t)(end - lo);
		return py_in(&c->more, frame, n);
	}
	if (++c->apart > PY_FRAMES_APART)
		return NULL;
	raw->bytes += (uint32_t)n;
	return interp_read(mem, frame, buf, n) ? NULL : buf;
}

static void py_emit(struct interp_raw *raw, uint64_t code, uint64_t ip)
{
	raw->f[raw->nr++] = (struct interp_raw_frame){code, ip};
}

static int py_take(struct interp *ip, pid_t tid, const struct interp_mem *mem,
		   struct interp_raw *raw)
{
	struct py_state *ps = ip->priv;
	const struct py_layout *L = &ps->L;
	struct py_thread *t = py_thread(ps, tid, true);
	uint8_t b[PY_TS_MAX], fb[PY_FRAME_MAX];
	uint64_t frame, cframe = 0, chunk, prev;
	struct py_copies c;
	bool walked = false;
	const uint8_t *f;

	for (;;) {
		if (t->ts && !py_read_ts(ps, mem, t->ts, b) &&
		    TS(ps, b, ts_native_id) == (uint64_t)tid)
			break;
		t->ts = 0;
		/* A thread not (or no longer) known: look again, now and then. */
		if (walked || (t->misses++ % PY_MISS_WALK) || py_walk_threads(ip, mem)) {
			ip->st.misses++;
			return 0;
		}
		walked = true;
		t = py_thread(ps, tid, true);
		t->misses = 1;
	}
	raw->bytes += (uint32_t)ps->ts_len;
	frame = TS(ps, b, ts_frame);
	if (L->ts_cframe) {
		cframe = frame;
		/* The _PyCFrame lives on the C stack: mostly in the stack copy. */
		if (!cframe || interp_read(mem, cframe + L->cf_current, &frame, 8))
			return 0;
	}
	chunk = TS(ps, b, ts_chunk);
	memset(&c, 0, sizeof(c));
	/* One copy of the current chunk up to the innermost frame: the frames it holds. */
	if (frame && chunk && chunk <= frame && frame - chunk <= PY_WIN_MAX - L->fr_read) {
		size_t len = (size_t)(frame - chunk + L->fr_read);

		if (ps->win_cap < len) {
			free(ps->win);
			ps->win_cap = PY_WIN_MAX;
			ps->win = xp_malloc(ps->win_cap);
		}
		if (!interp_read(mem, chunk, ps->win, len)) {
			c.chunk = (struct py_win){chunk, len, ps->win};
			raw->bytes += (uint32_t)len;
		}
	}
	while (frame) {
		if (raw->nr + 2 > raw->cap) {
			raw->flags |= INTERP_RAW_TRUNCATED;
			break;
		}
		f = (frame & 7) ? NULL : py_frame(ps, mem, &c, frame, fb, raw);
		if (!f) {
			raw->flags |=
			    c.apart > PY_FRAMES_APART ? INTERP_RAW_TRUNCATED : INTERP_RAW_BROKEN;
			break;
		}
		prev = get64(f, L->fr_previous);
		if (L->fr_is_entry < 0 && (uint8_t)f[L->fr_owner] >= PY_OWNER_ENTRY) {
			/* An entry frame, on the C stack of the loop that ran the frames before it.
			 */
			py_emit(raw, 0, frame);
		} else {
			py_emit(raw, get64(f, L->fr_code) & L->code_mask, get64(f, L->fr_ip));
			if (L->fr_is_entry >= 0 && f[L->fr_is_entry]) {
				/* 3.11: the loop's _PyCFrame is the marker; the next is its
				 * previous. */
				py_emit(raw, 0, cframe);
				if (!cframe || read64(mem, cframe + L->cf_previous, &cframe))
					cframe = 0;
			}
		}
		if (prev == frame) {
			raw->flags |= INTERP_RAW_BROKEN;
			break;
		}
		frame = prev;
	}
	if (raw->flags & INTERP_RAW_BROKEN)
		ip->st.broken++;
	ip->st.takes++;
	return 0;
}

/* ---- line tables ----------------------------------------------------------- */

/* An unsigned varint of the location table (6-bit chunks, bit 6: more).  false past @end. */
static bool py_varint(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
	unsigned int shift = 0;
	uint32_t val = 0;
	uint8_t b;

	do {
		if (*p >= end || shift > 30)
			return false;
		b = *(*p)++;
		val |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*v = val;
	return true;
}

/*
 * Walk a location table: each entry is a first byte 1CCCCLLL (code, length
 * - 1 in code units), then per code: 15 no location; 14 long form (line
 * delta as a signed varint, then end line, column and end column as
 * varints); 13 no column (a signed line delta); 10 to 12 one line, delta
 * code - 10, and two column bytes; 0 to 9 short form, same line, one
 * column byte.  Fills @lines[0..@nunits) when @lines is not NULL (0 where
 * the table says nothing), and returns the line of @unit.  A malformed
 * table ends the walk: the units after it have no line.
 */
static uint32_t py_table_walk(const uint8_t *table, size_t len, uint32_t first_line,
			      uint32_t *lines, uint32_t nunits, uint32_t unit)
{
	const uint8_t *p = table, *end = table + len;
	uint64_t at = 0, stop = (uint64_t)(unit >= nunits ? unit : nunits - 1) + 1, u;
	int64_t line = first_line;
	uint32_t found = 0;

	while (p < end && at < stop) {
		uint8_t b = *p++;
		unsigned int code = (b >> 3) & 15, n = (b & 7) + 1;
		uint32_t v, entry = 0;

		if (!(b & 128))
			break; /* not the start of an entry: malformed */
		if (code == 14 || code == 13) {
			if (!py_varint(&p, end, &v))
				break;
			line += (v & 1) ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
			if (line < -(int64_t)UINT32_MAX || line > (int64_t)UINT32_MAX)
				break;
		} else if (code >= 10 && code <= 12) {
			line += code - 10;
		}
		if (code != 15 && line > 0 && line <= UINT32_MAX)
			entry = (uint32_t)line;
		/* The rest of the entry: columns, which nothing here needs. */
		while (p < end && !(*p & 128))
			p++;
		for (u = at; lines && u < at + n && u < nunits; u++)
			lines[u] = entry;
		if (unit >= at && unit < at + n)
			found = entry;
		at += n;
	}
	return found;
}

uint32_t interp_py_line(const uint8_t *table, size_t len, uint32_t first_line, uint32_t unit)
{
	return py_table_walk(table, len, first_line, NULL, 0, unit);
}

/* ---- code objects ---------------------------------------------------------- */

/* Append code point @c to @out (of @cap bytes, at *@n) as UTF-8; false when full. */
static bool put_utf8(char *out, size_t cap, size_t *n, uint32_t c)
{
	char b[4];
	size_t k;

	if ((c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
		c = 0xfffd;
	if (c < 0x80) {
		b[0] = (char)c;
		k = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		k = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		k = 3;
	} else {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		k = 4;
	}
	if (*n + k >= cap)
		return false;
	memcpy(out + *n, b, k);
	*n += k;
	return true;
}

/* The str object at @addr as UTF-8 (a compact string: what names are), or NULL. */
static char *py_string(const struct py_layout *L, const struct interp_mem *mem, uint64_t addr)
{
	uint8_t h[256], *data;
	uint64_t len, state, kind, at, i;
	size_t n = 0, cap;
	char *out;

	if (!addr || (addr & 7) || interp_read(mem, addr, h, L->us_ascii))
		return NULL;
	len = get64(h, L->us_length);
	state = get32(h, L->us_state);
	kind = (state >> 2) & 7;
	/* state: interned:2, kind:3, compact:1, ascii:1 (every version read here). */
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4) ||
	    (((state >> 6) & 1) && kind != 1))
		return NULL;
	if (len > PY_STR_MAX)
		len = PY_STR_MAX;
	at = addr + (((state >> 6) & 1) ? L->us_ascii : L->us_compact);
	data = xp_malloc(len * kind + 1);
	if (len && interp_read(mem, at, data, len * kind)) {
		free(data);
		return NULL;
	}
	cap = len * 4 + 1;
	out = xp_malloc(cap);
	for (i = 0; i < len; i++) {
		uint32_t c = kind == 1	 ? data[i]
			     : kind == 2 ? (uint32_t)data[2 * i] | data[2 * i + 1] << 8
					 : get32(data, 4 * i);

		if (!put_utf8(out, cap, &n, c ? c : '?'))
			break;
	}
	out[n] = 0;
	free(data);
	return out;
}

/* Whether the type object at @type is named "code". */
static bool py_is_code_type(const struct py_layout *L, const struct interp_mem *mem, uint64_t type)
{
	uint64_t name;
	char s[5];

	return type && !(type & 7) && !read64(mem, type + L->tp_name, &name) &&
	       !interp_read(mem, name, s, sizeof(s)) && !memcmp(s, "code", 5);
}

static int py_read_code(struct interp *ip, const struct interp_mem *mem, uint64_t addr,
			struct interp_code_entry *e, bool check)
{
	struct py_state *ps = ip->priv;
	const struct py_layout *L = &ps->L;
	uint64_t type, nunits, fn, qn, lt, tlen;
	uint8_t h[PY_CODE_HDR_MAX], *table;
	int32_t first;

	if (!addr || (addr & 7) || interp_read(mem, addr, h, L->co_code))
		return -EFAULT;
	type = get64(h, L->ob_type);
	if (ps->code_type ? type != ps->code_type : !py_is_code_type(L, mem, type))
		return -EINVAL;
	ps->code_type = type;
	nunits = get64(h, L->ob_size);
	first = (int32_t)get32(h, L->co_firstlineno);
	fn = get64(h, L->co_filename);
	qn = get64(h, L->co_qualname);
	lt = get64(h, L->co_linetable);
	if (!nunits || nunits > PY_UNITS_MAX)
		return -EINVAL;
	e->print = xp_mix64(xp_mix64(xp_mix64(type ^ nunits << 1) ^ fn) ^ xp_mix64(qn ^ lt)) ^
		   (uint32_t)first;
	if (check)
		return 0;
	e->info.name = py_string(L, mem, qn);
	e->info.file = py_string(L, mem, fn);
	if (!e->info.name || !e->info.file)
		return -EINVAL;
	e->info.first_line = first > 0 ? (uint32_t)first : 0;
	e->code_start = addr + L->co_code;
	e->unit = 2; /* _Py_CODEUNIT */
	e->nunits = (uint32_t)nunits;
	e->lines = xp_calloc(nunits, sizeof(*e->lines));
	if (read64(mem, lt + L->ob_size, &tlen) || tlen > PY_TABLE_MAX)
		return 0; /* no lines */
	table = xp_malloc(tlen + 1);
	if (!interp_read(mem, lt + L->by_data, table, tlen))
		py_table_walk(table, tlen, e->info.first_line, e->lines, e->nunits, 0);
	free(table);
	return 0;
}

const struct interp_backend interp_python = {
    .name = "python",
    .kind = INTERP_PYTHON,
    .is_candidate = py_is_candidate,
    .open = py_open,
    .take = py_take,
    .read_code = py_read_code,
    .free = py_free,
};

struct interp *interp_python_open(const struct interp_mem *mem, uint64_t runtime, uint32_t version,
				  pid_t pid, uint32_t *next_id)
{
	struct interp *ip = xp_calloc(1, sizeof(*ip));

	ip->be = &interp_python;
	ip->pid = pid;
	ip->next_id = next_id;
	snprintf(ip->comm, sizeof(ip->comm), "canned");
	if (py_start(ip, mem, runtime, version, 0)) {
		free(ip);
		return NULL;
	}
	return ip;
}
