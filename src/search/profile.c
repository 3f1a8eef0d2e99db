/* The profile tree of a search (search/profile.h): built over the plan once it is planned
 * (sc__profile_attach, each plan node pointing at its record), filled by the timed wrapper
 * around each node's iterators (plan_iter.c), copied out for the shard's result. */
#include "search/profile.h"

#include <string.h>

#include "search/internal.h"

static const char *type_name(sc__plan_kind k)
{
    switch (k) {
    case SC__PLAN_NONE: return "MatchNoDocsQuery";
    case SC__PLAN_ALL: return "MatchAllDocsQuery";
    case SC__PLAN_TERM: return "TermQuery";
    case SC__PLAN_PHRASE: return "PhraseQuery";
    case SC__PLAN_TERMSET: return "MultiTermQueryConstantScoreWrapper";
    case SC__PLAN_EXISTS: return "FieldExistsQuery";
    case SC__PLAN_BOOL: return "BooleanQuery";
    case SC__PLAN_DISMAX: return "DisjunctionMaxQuery";
    case SC__PLAN_BOOSTING: return "BoostingQuery";
    case SC__PLAN_CONST: return "ConstantScoreQuery";
    case SC__PLAN_RANGE: return "PointRangeQuery";
    case SC__PLAN_GEO: return "GeoQuery";
    case SC__PLAN_DOCS: return "KnnScoreDocQuery";
    case SC__PLAN_FUNCTION_SCORE: return "FunctionScoreQuery";
    case SC__PLAN_NESTED: return "ESToParentBlockJoinQuery";
    }
    return "Query";
}

/* The children of p in the order profiles show them; *n set. */
static size_t children(const sc__plan *p, sc__plan **out, size_t cap)
{
    size_t n = 0;
    struct {
        sc__plan **v;
        size_t n;
    } lists[] = {{p->must, p->n_must},
                 {p->should, p->n_should},
                 {p->must_not, p->n_must_not},
                 {p->filter, p->n_filter}};
    if (p->kind == SC__PLAN_BOOSTING) {
        lists[0].n = p->must ? 1 : 0;
        lists[2].n = p->must_not ? 1 : 0;
    }
    if (p->child && n < cap)
        out[n++] = p->child;
    for (size_t l = 0; l < 4; l++)
        for (size_t i = 0; lists[l].v && i < lists[l].n; i++)
            if (lists[l].v[i] && n < cap)
                out[n++] = lists[l].v[i];
    return n;
}

static size_t n_children(const sc__plan *p)
{
    size_t n = p->child ? 1 : 0;
    sc__plan **lists[] = {p->must, p->should, p->must_not, p->filter};
    size_t ns[] = {p->n_must, p->n_should, p->n_must_not, p->n_filter};
    if (p->kind == SC__PLAN_BOOSTING)
        ns[0] = p->must ? 1 : 0, ns[2] = p->must_not ? 1 : 0;
    for (size_t l = 0; l < 4; l++)
        for (size_t i = 0; lists[l] && i < ns[l]; i++)
            n += lists[l][i] != NULL;
    return n;
}

static sc_status attach(sc__search_ctx *ctx, sc__plan *p, sc_profile_node *node, int depth)
{
    memset(node, 0, sizeof *node);
    node->type = type_name(p->kind);
    node->description = sc__plan_describe(ctx->a, p);
    if (!node->description)
        return sc__search_oom(ctx);
    p->prof = node;
    size_t n = depth < 64 ? n_children(p) : 0;
    if (!n)
        return SC_OK;
    sc__plan **kids = sc_arena_alloc(ctx->a, n * sizeof *kids);
    node->children = sc_arena_calloc(ctx->a, n, sizeof *node->children);
    if (!kids || !node->children)
        return sc__search_oom(ctx);
    node->n_children = children(p, kids, n);
    for (size_t i = 0; i < node->n_children; i++)
        SC_TRY(attach(ctx, kids[i], &node->children[i], depth + 1));
    return SC_OK;
}

sc_status sc__profile_attach(sc__search_ctx *ctx, sc__plan *plan)
{
    sc_profile_node *root = sc_arena_calloc(ctx->a, 1, sizeof *root);
    if (!root)
        return sc__search_oom(ctx);
    SC_TRY(attach(ctx, plan, root, 0));
    ctx->o->profile->query = root;
    return SC_OK;
}

uint64_t sc_profile_node_time_ns(const sc_profile_node *n)
{
    uint64_t t = n->build_ns;
    for (size_t i = 0; i < SC_PROF_COUNT_; i++)
        t += n->times_ns[i];
    return t;
}

static char *dup_str(sc_arena *a, const char *s)
{
    return s ? sc_arena_strndup(a, s, strlen(s)) : NULL;
}

static sc_status copy_node(sc_arena *a, const sc_profile_node *src, sc_profile_node *dst)
{
    *dst = *src;
    /* the type too: a profile decoded from another node holds no static strings */
    dst->type = dup_str(a, src->type);
    dst->description = dup_str(a, src->description);
    if ((src->type && !dst->type) || (src->description && !dst->description))
        return SC_ENOMEM;
    if (!src->n_children)
        return SC_OK;
    dst->children = sc_arena_calloc(a, src->n_children, sizeof *dst->children);
    if (!dst->children)
        return SC_ENOMEM;
    for (size_t i = 0; i < src->n_children; i++)
        SC_TRY(copy_node(a, &src->children[i], &dst->children[i]));
    return SC_OK;
}

sc_status sc_search_profile_copy(sc_arena *a, const sc_search_profile *src, sc_search_profile **out)
{
    sc_search_profile *p = sc_arena_alloc(a, sizeof *p);
    if (!p)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    *p = *src;
    p->collector = dup_str(a, src->collector);
    if (src->collector && !p->collector)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    if (src->query) {
        p->query = sc_arena_alloc(a, sizeof *p->query);
        sc_status st = p->query ? copy_node(a, src->query, p->query) : SC_ENOMEM;
        if (st != SC_OK)
            return a->over_budget ? SC_ELIMIT : st;
    }
    *out = p;
    return SC_OK;
}
