#ifndef KF_VERSION_API_H
#define KF_VERSION_API_H
/* kforge's version (git describe, baked in at build time). */
const char *kforge_version(void);
#endif
