/* Links the LLM proposer into kforge. collector/proposers.c refers to
 * proposer_llm_open weakly, and a weak reference does not pull a member
 * out of libkforge.a, so without a strong reference somewhere in the
 * binary the registry would report "the llm proposer is not part of this
 * build". This file (cli objects are always linked) is that reference.
 * It can go once proposers.c refers to the opener strongly. */
#if defined(__has_include)
#if __has_include("collector/proposers.h")
#include "collector/proposers.h"
extern proposer_open_fn const kf_link_llm_proposer;
proposer_open_fn const kf_link_llm_proposer = proposer_llm_open;
#else
typedef int kf_llm_link_unused;
#endif
#else
typedef int kf_llm_link_unused;
#endif
