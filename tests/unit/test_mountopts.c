/* Unit tests of fs/mountopts.c: the options of mount helpers the daemon drops, `debug`, and
 * `log_socket=` (docs/interface.md, "Daemon command line"). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mountopts.h"

static void helper_options_dropped(void **state)
{
	static const char *const dropped[] = {
		"defaults",
		"auto",
		"noauto",
		"user",
		"users",
		"nouser",
		"owner",
		"group",
		"nofail",
		"_netdev",
		"rw",
		"dev",
		"suid",
		"exec",
		"x-systemd.automount",
		"x-systemd.requires=network.target",
		"x-gvfs-hide",
		"comment=systemd.automount",
	};
	struct mount_extras m;

	(void)state;
	for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
		mountopts_init(&m);
		assert_int_equal(mountopts_apply(&m, dropped[i], NULL), 1);
		assert_false(m.debug);
		assert_string_equal(m.log_socket, "");
	}
}

/* What FUSE or the pool must see, and what FUSE must refuse, is not swallowed here. */
static void other_options_not_ours(void **state)
{
	static const char *const others[] = {
		"allow_other", "ro", "nodev",	"nosuid",   "fsname=x", "max_size=1G", "bogus",
		"users=1",     "x",  "default", "xsystemd", "-d",	"debug=1",     "log_socket",
	};
	struct mount_extras m;

	(void)state;
	mountopts_init(&m);
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		assert_int_equal(mountopts_apply(&m, others[i], NULL), 0);
	assert_false(m.debug);
}

static void debug_sets_tracing(void **state)
{
	struct mount_extras m;

	(void)state;
	mountopts_init(&m);
	assert_int_equal(mountopts_apply(&m, "debug", NULL), 1);
	assert_true(m.debug);
}

static void log_socket_path(void **state)
{
	struct mount_extras m;
	const char *why = NULL;
	char longpath[200];

	(void)state;
	mountopts_init(&m);
	assert_int_equal(mountopts_apply(&m, "log_socket=/run/x/log", &why), 1);
	assert_string_equal(m.log_socket, "/run/x/log");

	assert_int_equal(mountopts_apply(&m, "log_socket=relative", &why), -EINVAL);
	assert_non_null(strstr(why, "log_socket="));
	assert_int_equal(mountopts_apply(&m, "log_socket=", &why), -EINVAL);

	memset(longpath, 'a', sizeof(longpath));
	memcpy(longpath, "log_socket=/", 12);
	longpath[sizeof(longpath) - 1] = '\0';
	why = NULL;
	assert_int_equal(mountopts_apply(&m, longpath, &why), -ENAMETOOLONG);
	assert_non_null(strstr(why, "too long"));
	/* A refused value leaves the previous one. */
	assert_string_equal(m.log_socket, "/run/x/log");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(helper_options_dropped),
		cmocka_unit_test(other_options_not_ours),
		cmocka_unit_test(debug_sets_tracing),
		cmocka_unit_test(log_socket_path),
	};

	return cmocka_run_group_tests_name("mountopts", tests, NULL, NULL);
}
