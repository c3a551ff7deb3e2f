/* Schema v1 of the store. Keys are TEXT and content-derived or random
 * (never rowids), so stores made on different machines merge by key.
 * Every later migration appends to store_migrations[] in store_schema.c. */
#ifndef KF_STORE_SCHEMA_H
#define KF_STORE_SCHEMA_H

struct store_migration {
	int version;
	const char *sql;
};

extern const struct store_migration store_migrations[];
extern const int store_n_migrations;

/* Tables in dependency order (parents first), for merge and export. */
extern const char *const store_tables[];

#endif
