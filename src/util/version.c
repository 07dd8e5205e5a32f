/* SPDX-License-Identifier: MIT */
/* The release and git revision this binary was built from (version_gen.h is made by cmake/Version.cmake). */
#include "util/version.h"
#include "version_gen.h"

const char *lr_release(void)
{
	return LR_RELEASE;
}

const char *lr_revision(void)
{
	return LR_REVISION;
}
