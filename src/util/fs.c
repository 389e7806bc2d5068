/* fs.c: file-system helpers. */
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

int fs_read(const char *path, struct buf *out)
{
	char chunk[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	struct stat st;

	if (fd < 0) {
		err_set(ERR_INPUT, "cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		err_set(ERR_INPUT, "cannot read '%s': is a directory", path);
		return -1;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err_set(ERR_INPUT, "cannot read '%s': %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		if (buf_add(out, chunk, (size_t)n) < 0) {
			err_set(ERR_INPUT, "cannot read '%s': file too large", path);
			close(fd);
			return -1;
		}
	}
	close(fd);
	return 0;
}

static int write_atomic(const char *path, const void *data, size_t len, int sync);

int fs_write_atomic(const char *path, const void *data, size_t len)
{
	return write_atomic(path, data, len, 1);
}

int fs_write_atomic_nosync(const char *path, const void *data, size_t len)
{
	return write_atomic(path, data, len, 0);
}

static int write_atomic(const char *path, const void *data, size_t len, int sync)
{
	/* Unique per process and call: two threads may write one path. */
	static unsigned long counter;
	char *tmp = xasprintf("%s.tmp.%ld.%lu", path, (long)getpid(), __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
	const char *p = data;
	int fd, rc = -1;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err_set(ERR_INFRA, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err_set(ERR_INFRA, "cannot write '%s': %s", path, strerror(errno));
			close(fd);
			unlink(tmp);
			goto out;
		}
		p += n;
		len -= (size_t)n;
	}
	if ((sync && fsync(fd) < 0) || close(fd) < 0) {
		err_set(ERR_INFRA, "cannot write '%s': %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) < 0) {
		err_set(ERR_INFRA, "cannot write '%s': %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	free(tmp);
	return rc;
}

int fs_mkdir_p(const char *path)
{
	char *p = xstrdup(path);
	int rc = 0;

	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST) {
				err_set(ERR_INFRA, "cannot create folder '%s': %s", p, strerror(errno));
				rc = -1;
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	if (rc == 0 && !fs_is_dir(path)) {
		err_set(ERR_INFRA, "cannot create folder '%s': not a folder", path);
		rc = -1;
	}
	return rc;
}

int fs_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

int fs_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *fs_join(const char *a, const char *b)
{
	size_t n = strlen(a);
	if (n && a[n - 1] == '/')
		return xasprintf("%s%s", a, b);
	return xasprintf("%s/%s", a, b);
}

void fs_remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d) {
		unlink(path);
		return;
	}
	while ((e = readdir(d))) {
		char *child;
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		child = fs_join(path, e->d_name);
		if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
			fs_remove_tree(child);
		else
			unlink(child);
		free(child);
	}
	closedir(d);
	rmdir(path);
}

char *fs_exe_dir(void)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	return xstrdup(path);
}

char *fs_absolute(const char *path)
{
	char cwd[PATH_MAX];
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return xstrdup(path);
	return fs_join(cwd, path);
}

/* An absolute, resolved form of path (realpath where it exists). */
static char *resolved(const char *path)
{
	char *r = realpath(path, NULL), *abs;
	if (r) {
		abs = xstrdup(r);
		free(r);
		return abs;
	}
	return fs_absolute(path);
}

char *fs_relative(const char *from_dir, const char *to)
{
	char *from = resolved(from_dir), *dest = resolved(to);
	struct buf out = BUF_INIT;
	size_t common = 0, up = 0, i;
	/* The longest shared prefix that ends at a component boundary: either
	 * a '/' both have, or all of `from` when `to` goes on below it. */
	for (i = 0; from[i] && from[i] == dest[i]; i++)
		if (from[i] == '/')
			common = i + 1;
	if (!from[i] && (dest[i] == '/' || !dest[i])) {
		common = i + (dest[i] == '/');
		up = i;	/* nothing of `from` is left to climb out of */
	} else {
		up = common;
	}
	if (up < strlen(from) && from[up])
		for (const char *s = from + up; *s;) {
			buf_adds(&out, "../");
			s = strchr(s, '/');
			if (!s)
				break;
			while (*s == '/')
				s++;
		}
	buf_adds(&out, dest + common);
	free(from);
	free(dest);
	return buf_detach(&out);
}

void fs_remove_stale_temps(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		const char *t = strstr(e->d_name, ".tmp.");
		long pid;
		char *end, *path;
		if (!t)
			continue;
		pid = strtol(t + 5, &end, 10);
		if (pid <= 0 || (*end && *end != '.') || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		path = fs_join(dir, e->d_name);
		unlink(path);
		free(path);
	}
	closedir(d);
}
