/* Data for the tests (testutil.h): the deterministic byte pattern (fill and check), reads and
 * writes that go on past short counts and EINTR, and a file mapped by its path. */
#include "testutil.h"

#include <sys/mman.h>

unsigned char pat_byte(uint32_t seed, uint64_t off)
{
	uint64_t x = off * 0x9E3779B97F4A7C15ull + seed;

	x ^= x >> 29;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 32;
	return (unsigned char)x;
}

void pat_fill(void *buf, size_t len, uint32_t seed, uint64_t off)
{
	unsigned char *b = buf;

	for (size_t i = 0; i < len; i++)
		b[i] = pat_byte(seed, off + i);
}

long pat_check(const volatile void *buf, size_t len, uint32_t seed, uint64_t off)
{
	const volatile unsigned char *b = buf;

	for (size_t i = 0; i < len; i++)
		if (b[i] != pat_byte(seed, off + i))
			return (long)i;
	return -1;
}

ssize_t pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, off + (off_t)done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

ssize_t pread_all(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + (off_t)done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

void *tu_map_path(const char *path, size_t len)
{
	int fd = open(path, O_RDWR);
	void *m;
	int e;

	if (fd < 0)
		return MAP_FAILED;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	e = errno;
	close(fd);
	errno = e;
	return m;
}
