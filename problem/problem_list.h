/* The PROBLEMS syntax of `kforge search --problems` and `make dataset
 * PROBLEMS=...`: a comma-separated list of items, each one of
 *   level1            every problem of a level ("all" = every level)
 *   23  or  level2/23 one problem by number (level 1 unless given)
 *   1-10              a range of numbers (level 1 unless "level2/1-10")
 *   Softmax           a name (case-insensitive), a full id "level1/023_Softmax",
 *                     or a KernelBench file name "19_ReLU.py" (problem_name_find)
 * resolved against ROOT/problems/levelN/NNN_Name directories. The result
 * is sorted by level and number, without duplicates. */
#ifndef KF_PROBLEM_LIST_H
#define KF_PROBLEM_LIST_H

#include "core/buf.h"
#include "problem/problem.h" /* PROBLEM_UNKNOWN */

#define PROBLEM_LIST_MAX 10000      /* problems in one list */
#define PROBLEM_LIST_SPEC_MAX 65536 /* bytes of a PROBLEMS string */

struct problem_ref {
	char *id;      /* "level1/023_Softmax", owned */
	char *dir;     /* ROOT/problems/level1/023_Softmax, owned */
	int level, number;
};

struct problem_list {
	struct problem_ref *v;
	int n, alloc;
};

void problem_list_init(struct problem_list *l);
void problem_list_release(struct problem_list *l);

/* Parses spec against ROOT/problems. 0; PROBLEM_UNKNOWN with err naming
 * the item that matched nothing (with a suggestion for a misspelt name);
 * -1 when the suite cannot be read. */
int problem_list_resolve(struct problem_list *l, const char *root, const char *spec,
			 struct buf *err);

#endif
