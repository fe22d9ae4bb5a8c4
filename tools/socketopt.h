/*
 * socketopt.h - a command that only talks to strobed ('strobe mark',
 * 'strobe rm', 'strobe stop'): its command line, whose one option is strobed's socket
 * (--socket PATH, and --help, before the operands), and its one request.
 */
#ifndef STROBE_SOCKETOPT_H
#define STROBE_SOCKETOPT_H

#include "proto.h"

/*
 * Parse the options of command cmd (argv[0] is its name): --socket PATH
 * into *socket (which holds the default when called), --help printing
 * usage on stdout.  The first operand stops the options ('strobe rm --
 * -3' too).  Returns -1 when the operands follow, at argv[optind];
 * otherwise the command's exit status: 0 after --help, 2 after a usage
 * error (printed: "strobe CMD: unknown option '-x': see 'strobe CMD
 * --help'", or "option --socket needs a value").
 */
int socketopt_parse(const char *cmd, const char *usage, int argc, char **argv,
		    const char **socket);

/*
 * socketopt_parse() for a command that takes no operands ('strobe stop'):
 * options may follow operands, and any operand is a usage error ("strobe
 * CMD: unexpected argument 'x'", 2).  Returns -1 when the command may
 * proceed, else its exit status.
 */
int socketopt_none(const char *cmd, const char *usage, int argc, char **argv,
		   const char **socket);

/*
 * Send req (freed) to strobed on socket: 0 with *resp its answer, or 1
 * (the exit status) after printing "strobe CMD: why" on stderr.  When no
 * strobed answers there and unreachable is given, why is "no strobed
 * answers on SOCKET: " and unreachable (what to do).
 */
int socketopt_call(const char *cmd, const char *socket, const char *unreachable,
		   struct proto_msg *req, struct proto_msg *resp);

#endif
