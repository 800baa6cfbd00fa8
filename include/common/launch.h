/* Launch attributes shared by the kernels launched with cudaLaunchKernelExC.  C and CUDA (host code). */
#ifndef COMMON_LAUNCH_H
#define COMMON_LAUNCH_H

#include <cuda_runtime_api.h>
#include <string.h>

/* Programmatic dependent launch: the kernel may start while the one before it in the stream drains
 * (once every CTA of that one executed griddepcontrol.launch_dependents, or exited); it must execute
 * griddepcontrol.wait before it reads what that kernel wrote. */
static inline cudaLaunchAttribute cm_attr_pdl(void)
{
    cudaLaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a.val.programmaticStreamSerializationAllowed = 1;
    return a;
}

#endif
