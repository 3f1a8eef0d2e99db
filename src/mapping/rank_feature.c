/* rank_feature and rank_features values (mapping.h): a document's number (or numeric string)
 * checked as Elasticsearch's RankFeatureFieldMapper does and encoded as Lucene's FeatureField
 * frequency, which the rank_feature query (search/function_score.c) decodes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mapping/internal.h"

sc_status sc_mapping_rank_feature_encode(float value, int64_t *out, sc_mapping_error *err)
{
    if (!isfinite(value) || !(value >= 1.17549435e-38f)) { /* Float.MIN_NORMAL */
        sc__mapping_cause(err, "illegal_argument_exception",
                          isfinite(value) ? "featureValue must be a positive normal float, got: %g"
                                          : "featureValue must be finite, got: %g",
                          (double)value);
        return SC_EINVAL;
    }
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    *out = (int64_t)(bits >> 15);
    return SC_OK;
}

sc_status sc__mapping_rank_feature_value(const sc_mapping_field *f, const sc__scalar *v,
                                         int64_t *out, sc_mapping_error *err)
{
    double d;
    if (v->kind == SC__S_INT || v->kind == SC__S_REAL) {
        d = v->d;
    } else if (v->kind == SC__S_STRING && v->text.len && v->text.len < 64) {
        char buf[64], *end;
        memcpy(buf, v->text.ptr, v->text.len);
        buf[v->text.len] = 0;
        d = strtod(buf, &end);
        if (*end) {
            sc__mapping_cause(err, "number_format_exception", "For input string: \"%s\"", buf);
            return SC_EINVAL;
        }
    } else {
        sc__mapping_cause(err, "illegal_argument_exception", "[%s] fields only accept numbers",
                          sc_mapping_type_name(f->type));
        return SC_EINVAL;
    }
    float x = (float)d;
    if (!f->positive_score_impact)
        x = 1.0f / x; /* Elasticsearch indexes the inverse: higher values score lower */
    return sc_mapping_rank_feature_encode(x, out, err);
}
