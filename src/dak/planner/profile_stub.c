/* Built when the CUDA parts are off: `dak profile` says so. */
#include "dak/planner.h"

#include <string.h>

int dak_profile_measure(const dak_profile_opts *o, dak_profile *p, dak_profile_extra *x,
                        cm_err *err)
{
    (void)o;
    memset(p, 0, sizeof *p);
    memset(x, 0, sizeof *x);
    return cm_fail(err, "dak profile: not built (this build has no CUDA: configure with nvcc "
                        "present and DSBDAK_CUDA=ON)");
}
