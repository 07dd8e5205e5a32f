/* SPDX-License-Identifier: MIT */
/* linerate-man DATE: prints linerate(1) in roff. A build tool, run by CMake; never installed. */
#include <stdio.h>
#include "cmd/man.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: linerate-man DATE > linerate.1\n");
		return 2;
	}
	lr_man_write(stdout, argv[1]);
	return fflush(stdout) || ferror(stdout) ? 1 : 0;
}
