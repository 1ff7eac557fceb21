/*
 * hash_missing.c - orcu-bench hash when liborcu-urcu or liburcu-cds was
 * not built: the scenario says so instead of failing to link.
 */
#include "bench.h"
#include "hash.h"

int scen_hash(void)
{
	fprintf(stderr, "orcu-bench: hash needs liborcu-urcu and liburcu-cds (liburcu-dev)\n");
	return 1;
}

int child_hash(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return 2;
}
