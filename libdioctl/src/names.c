// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Names of the values a PI failure report carries (struct dio_request's
 * pi_err_tag and pi_err_source, struct dio_pi_error's tag): one table, so
 * that dioctl, the fio engine and the examples print the same words.
 * The names are stable: dioctl's JSON output carries them.
 */
#include "dioctl_pi.h"

const char *dio_pi_tag_name(unsigned int tag)
{
	switch (tag) {
	case DIO_PI_TAG_NONE:	return "none";
	case DIO_PI_TAG_GUARD:	return "guard";
	case DIO_PI_TAG_APP:	return "app";
	case DIO_PI_TAG_REF:	return "ref";
	}
	return "unknown";
}

const char *dio_pi_source_name(unsigned int source)
{
	switch (source) {
	case DIO_PI_SRC_NONE:	return "none";
	case DIO_PI_SRC_USER:	return "user";
	case DIO_PI_SRC_MODULE:	return "module";
	case DIO_PI_SRC_DEVICE:	return "device";
	}
	return "unknown";
}
