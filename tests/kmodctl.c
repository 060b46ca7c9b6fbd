// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kmodctl: load and unload modules with libkmod, for the guest scripts.
 *   kmodctl insert PATH [OPTIONS]   insert a module file
 *   kmodctl probe NAME [OPTIONS]    insert a module and its dependencies
 *   kmodctl remove NAME             remove a module
 * The module directory is $DIO_MODDIR (default: the running kernel's).
 */
#include <stdio.h>
#include <string.h>

#include "testlib.h"

int main(int argc, char **argv)
{
	const char *opts = argc > 3 ? argv[3] : NULL;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: kmodctl insert PATH|probe NAME|remove NAME [OPTIONS]\n");
		return 2;
	}
	if (!strcmp(argv[1], "insert"))
		ret = tl_kmod_insert_path(argv[2], opts);
	else if (!strcmp(argv[1], "probe"))
		ret = tl_kmod_probe(argv[2], opts);
	else if (!strcmp(argv[1], "remove"))
		ret = tl_kmod_remove(argv[2]);
	else {
		fprintf(stderr, "kmodctl: unknown command %s\n", argv[1]);
		return 2;
	}
	return ret < 0 ? 1 : 0;
}
