/* SPDX-License-Identifier: MIT */
/* What this binary is: the release and the git revision it was built from ("unknown" outside git). */
#ifndef LINERATE_VERSION_H
#define LINERATE_VERSION_H

const char *lr_release(void);
const char *lr_revision(void);

#endif
