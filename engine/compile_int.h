/* Between compile.c (parent) and compile_child.c (the sandboxed child). */
#ifndef KF_COMPILE_INT_H
#define KF_COMPILE_INT_H

#define CHILD_EXIT_SANDBOX 3   /* NVRTC missing or a bad request: stderr says why */
#define CHILD_EXIT_FORMAT 4    /* the include scan refused the source: stderr has the error */
#define CHILD_EXIT_OOM 5       /* NVRTC ran out of memory (address-space limit) */

#endif
