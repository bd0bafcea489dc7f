/* SPDX-License-Identifier: MIT */
/*
 * The data file of a recording (record, attach): creating it as perf does,
 * with an earlier file kept as "<path>.old", its meta records, the parts of
 * --switch-output (naming each ended part, opening the next, a pprof beside
 * each on request), and closing it, or discarding it when the recording
 * never took place.  Nothing else in cmd/ creates, renames or removes the
 * recording's files; data/datafile.h writes what goes in them.
 */
#ifndef XPROF_CMD_OUTPUT_H
#define XPROF_CMD_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct df_writer;
struct sampler_opts;

struct output {
	const char *path; /* -o as given */
	int argc;
	char **argv; /* the command line, for the meta records of each part */
	/*
	 * The regular file written: @path, through a symbolic link; NULL when
	 * @path is no regular file (a device, a FIFO: written as it is).  The
	 * file that was there is kept as @old ("<dest>.old") from the start,
	 * put back by output_discard; an empty one is not kept once done.
	 */
	char *dest, *old;
	bool old_empty;
	struct df_writer *w; /* the current part's */
	bool parts;	     /* --switch-output given */
	bool pprof;	     /* --switch-output-format pprof */
	unsigned int nr;     /* parts ended */
	uint64_t bytes;	     /* bytes of the parts ended */
};

/*
 * Create the data file @path (a regular file there is first renamed to
 * "<path>.old", replacing an earlier one) with its meta records: command
 * line (@argc, @argv), host, version.  Mode 0600.  0, or -1 after a printed
 * error with the earlier file back in place.  One output per process.
 */
int output_open(struct output *o, const char *path, int argc, char **argv);

/*
 * The recording never took place (the command could not run, the attach
 * failed): close the file unwritten, remove it and put the earlier one
 * back.
 */
void output_discard(struct output *o);

/*
 * --switch-output: when @so ends parts (its switch_ns, switch_bytes or
 * switch_signal), give it the function that names each part as it ends
 * and starts the next: the file at @path is renamed to "<path>.<time>"
 * (YYYYmmddHHMMSScc, local time, as perf names them, "-N" added if that
 * exists) and a new one started; with @pprof (--switch-output-format
 * pprof) a "<part>.pb.gz" is written beside each part in the background.
 * @o must outlive the recording.
 */
void output_parts(struct output *o, bool pprof, struct sampler_opts *so);

/*
 * After the recording: close the data file (df_writer_close); with parts,
 * name the last one as the others (its pprof before returning).  @name
 * gets the file's name (the output's when it could not be renamed),
 * *@bytes what all parts hold.  0, or -1 after a printed error; the file
 * keeps what was written either way.
 */
int output_close(struct output *o, char *name, size_t len, uint64_t *bytes);

#endif
