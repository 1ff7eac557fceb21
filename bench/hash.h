/*
 * hash.h - the rculfhash scenario (hash.c): the parent side and the
 * child process it re-executes as "__hash <flavor> <readers> <ms>".
 */
#ifndef ORCU_BENCH_HASH_H
#define ORCU_BENCH_HASH_H

int scen_hash(void);
int child_hash(int argc, char **argv);

#endif
