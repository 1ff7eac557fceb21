/*
 * lgpl_shim.c - a liburcu program with _LGPL_SOURCE built through orcu's
 * shim: its read side is orcu's inline one, its other calls go to the
 * shim's libraries.  Exit 0 when it ran correctly on orcu (orcu's library
 * is loaded and its threads run), 3 when it ran on something else, 1 on a
 * wrong result.
 */
#define _LGPL_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <urcu.h>

static int value = 7;
static int *ptr = &value;
static int freed;

static void cb(struct rcu_head *h)
{
	(void)h;
	__atomic_store_n(&freed, 1, __ATOMIC_RELAXED);
}

/* orcu's threads are named orcu-* (orcu-gp, orcu-og/N, ...). */
static int orcu_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if ((f = fopen(path, "r"))) {
			if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "orcu-", 5))
				n++;
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	static struct rcu_head head;

	rcu_register_thread();
	rcu_read_lock();
	int v = *rcu_dereference(ptr);
	int ongoing = rcu_read_ongoing();
	rcu_read_unlock();
	synchronize_rcu();
	call_rcu(&head, cb);
	rcu_barrier();
	int on_orcu = dlsym(RTLD_DEFAULT, "orcu_get_stats") && orcu_threads() > 0;
	rcu_unregister_thread();
	printf("lgpl_shim: value %d, read side ongoing %d, callback ran %d, on %s\n",
	       v, ongoing, freed, on_orcu ? "orcu" : "another library");
	if (v != 7 || !ongoing || !freed)
		return 1;
	return on_orcu ? 0 : 3;
}
