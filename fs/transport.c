/* transport: the uring= decision and the log lines naming the transport (see transport.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "transport.h"

#ifdef POOLFS_HAVE_URING
/* 1 if the kernel's enable_uring switch is on, 0 if off, -ENOENT if this kernel has none (it
 * needs Linux >= 6.14 built with CONFIG_FUSE_IO_URING), other negative errnos on read errors. */
static int kernel_uring_enabled(void)
{
	FILE *f = fopen(TRANSPORT_URING_PARAM, "re");
	int c, err;

	if (!f)
		return -errno;
	c = fgetc(f);
	err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (err)
		return err;
	return c == 'Y' || c == 'y' || c == '1';
}

static const char *kernel_uring_why(int state)
{
	if (state == -ENOENT)
		return "this kernel has no FUSE io_uring (" TRANSPORT_URING_PARAM " is missing; it "
		       "needs Linux >= 6.14 with CONFIG_FUSE_IO_URING)";
	if (state < 0)
		return "cannot read " TRANSPORT_URING_PARAM;
	return "the kernel's switch is off (as root: echo Y > " TRANSPORT_URING_PARAM ")";
}

int transport_prepare(enum uring_choice choice, struct fuse_args *args)
{
	int state;

	if (choice == URING_OFF)
		return 0;
	state = kernel_uring_enabled();
	if (state != 1) {
		if (choice == URING_ON) {
			fprintf(stderr, "poolfs: uring=on is not available here: %s\n",
				kernel_uring_why(state));
			return -EOPNOTSUPP;
		}
		log_info("uring=auto: %s, using /dev/fuse", kernel_uring_why(state));
		return 0;
	}
	return fuse_opt_add_arg(args, "-oio_uring") < 0 ? -ENOMEM : 0;
}

int transport_init(struct pool *p, struct fuse_conn_info *conn)
{
	enum uring_choice choice = p->opts.uring;

	if (choice == URING_OFF) {
		/* Also overrides libfuse's FUSE_URING_ENABLE environment switch. */
		fuse_unset_feature_flag(conn, FUSE_CAP_OVER_IO_URING);
		log_info("transport=/dev/fuse (uring=off)");
		return 0;
	}
	if (!(conn->capable_ext & FUSE_CAP_OVER_IO_URING)) {
		/* The switch was on at startup (or uring=auto found it off and said so then). */
		if (choice == URING_ON) {
			p->init_error = "uring=on is not available here: the kernel did not offer "
					"io_uring at INIT (was " TRANSPORT_URING_PARAM
					" turned off?)";
			return -EOPNOTSUPP;
		}
		log_info("transport=/dev/fuse (uring=auto: the kernel does not offer io_uring)");
		return 0;
	}
	log_info("transport=io_uring requested (uring=%s; libfuse falls back to /dev/fuse and says "
		 "so if its rings cannot start)",
		 options_uring_name(choice));
	return 0;
}

void transport_first_uring(struct pool *p)
{
	if (atomic_exchange(&p->uring_seen, 1) == 0)
		log_info("transport=io_uring in use");
}
#else
/* FUSE_MINOR_VERSION is the libfuse this daemon was compiled against: that decides, not the
 * library found at run time. */
#define NO_URING_WHY                                                                               \
	"this poolfs was built against libfuse 3.%d, which has no io_uring transport "             \
	"(it needs libfuse >= 3.18)"

int transport_prepare(enum uring_choice choice, struct fuse_args *args)
{
	(void)args;
	if (choice == URING_ON) {
		fprintf(stderr, "poolfs: uring=on is not available here: " NO_URING_WHY "\n",
			FUSE_MINOR_VERSION);
		return -EOPNOTSUPP;
	}
	if (choice == URING_AUTO)
		log_info("uring=auto: " NO_URING_WHY ", using /dev/fuse", FUSE_MINOR_VERSION);
	return 0;
}

int transport_init(struct pool *p, struct fuse_conn_info *conn)
{
	(void)conn;
	log_info("transport=/dev/fuse (uring=%s)", options_uring_name(p->opts.uring));
	return 0;
}

void transport_first_uring(struct pool *p)
{
	(void)p;
}
#endif
