/* Growth for the SC_VEC macros: doubling, overflow-checked. */
#include "base/vec.h"

#include <stdint.h>

sc_status sc__vec_reserve(void **ptr, size_t *cap, size_t len, size_t extra, size_t elem_size)
{
    if (extra <= *cap - len)
        return SC_OK;
    if (extra > SIZE_MAX / elem_size - len)
        return SC_ENOMEM;
    size_t need = len + extra;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    if (ncap > SIZE_MAX / elem_size)
        return SC_ENOMEM;
    void *p = realloc(*ptr, ncap * elem_size);
    if (!p)
        return SC_ENOMEM;
    *ptr = p;
    *cap = ncap;
    return SC_OK;
}
