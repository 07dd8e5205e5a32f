/* SPDX-License-Identifier: MIT */
/* linerate(1), generated from the command and option tables. */
#ifndef LINERATE_MAN_H
#define LINERATE_MAN_H

#include <stdio.h>

/* The whole page in roff (man macros); @date for its .TH line. */
void lr_man_write(FILE *out, const char *date);

#endif
