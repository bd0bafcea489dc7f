/* SPDX-License-Identifier: MIT */
/*
 * --control fifo:CTL[,ACK]: commands that a program or a script sends to a
 * recording through a FIFO, as to perf record's --control: "enable",
 * "disable", "stop", "ping", and xprof's "mark NAME", one per line; once a
 * command is done, "ack\n" is written to the ACK FIFO if there is one.
 * This file owns the option's syntax, opening the FIFOs, splitting what
 * arrives into lines and parsing them; the sampler acts on the commands.
 * control_spec_parse, control_feed, control_next and control_parse_line
 * are pure (unit-tested, fuzzed); the rest prints as each function says.
 * Not thread-safe.
 */
#ifndef XPROF_RECORD_CONTROL_H
#define XPROF_RECORD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

enum control_kind {
	CONTROL_NONE = 0, /* an empty line: ignored, not acknowledged */
	CONTROL_ENABLE,	  /* start or resume sampling */
	CONTROL_DISABLE,  /* pause sampling: no thread is interrupted */
	CONTROL_MARK,	  /* a phase named .name starts now */
	CONTROL_STOP,	  /* end the recording, as --duration does */
	CONTROL_PING,	  /* nothing: only the acknowledgement */
	CONTROL_INVALID,  /* not a command: .name holds the line, .why what is wrong */
};

#define CONTROL_LINE_MAX 256 /* longest command line, its newline included */
#define CONTROL_NAME_MAX 128 /* longest phase name (DF_MARK_NAME_MAX) */
#define CONTROL_ACK	 "ack\n"

struct control_cmd {
	enum control_kind kind;
	char name[CONTROL_NAME_MAX + 1]; /* NUL-terminated */
	const char *why;		 /* CONTROL_INVALID: a static string */
};

/*
 * Parse one command line (@len bytes, without its newline): the command
 * word, then for "mark" the phase name, the rest of the line without
 * surrounding blanks (1 to CONTROL_NAME_MAX bytes, no control characters).
 * A trailing '\r' and blanks around the line are ignored.  Fills @cmd and
 * returns its kind.
 */
enum control_kind control_parse_line(const char *line, size_t len, struct control_cmd *cmd);

/* --control's value: "fifo:CTL" or "fifo:CTL,ACK". */
struct control_spec {
	char ctl[4096], ack[4096]; /* ack "": none */
};

/* Parse @arg into @spec.  0, or -1 (nothing printed: the caller makes the usage error). */
int control_spec_parse(const char *arg, struct control_spec *spec);

struct control {
	int fd, ack_fd; /* -1: none */
	char buf[CONTROL_LINE_MAX];
	size_t len;
	bool skipping; /* the line being read was too long: drop it to its end */
};

/* An empty control (no descriptors), for control_feed/control_next alone. */
void control_init(struct control *c);

/*
 * Open the FIFOs of @spec: each must exist and be a FIFO.  They are
 * opened read-write and non-blocking, so neither the open nor a reader's
 * absence ever blocks the recording, and a writer that closes is no end
 * of file.  0, or -1 after printing an error with a hint (exit 1, before
 * any target is started).
 */
int control_open(struct control *c, const struct control_spec *spec);
void control_close(struct control *c);

/* Append up to @n bytes of @data to the line buffer.  Returns how many were taken. */
size_t control_feed(struct control *c, const char *data, size_t n);
/*
 * The next whole line of the buffer as a command in @cmd (a line longer
 * than CONTROL_LINE_MAX is CONTROL_INVALID).  False when no whole line is
 * buffered.
 */
bool control_next(struct control *c, struct control_cmd *cmd);

/*
 * The next command sent, reading what the FIFO holds without blocking.
 * False when none is waiting.  Prints nothing.
 */
bool control_poll(struct control *c, struct control_cmd *cmd);

/* The command word of @kind ("enable", ...; "" for CONTROL_NONE and CONTROL_INVALID). */
const char *control_kind_name(enum control_kind kind);

/* Write "ack\n" to the ACK FIFO, if any (never blocks; a full FIFO loses it). */
void control_ack(struct control *c);

#endif
