// The Lucene 8.7 counterparts of the Rally nyc_taxis operations that lucene-facet has no module
// for (bench/LuceneAggBench.java runs them): date histograms in a time zone and with metric
// sub-aggregations, auto_date_histogram, composite (terms, histogram, date_histogram,
// geotile_grid), sampler, t-digest percentiles and multi_terms. Each is the plain doc-values
// loop an engineer would write with Lucene alone:
//
// - date buckets: java.time computes the rounding (America/New_York rules included) once per
//   hour of the value range, so the doc loop is a division and an array lookup (every bucket
//   boundary of these roundings falls on a whole hour, time zone offsets included); metric
//   sub-aggregations (stats, min, max, avg) accumulate per hour cell and are folded into the
//   buckets at the end;
// - auto_date_histogram: per-hour cells, then Elasticsearch's rounding ladder from the minimum
//   interval (day x1, x7; month x1, x3; year x1, x5, x10, ...), the first that gives at most
//   `buckets` buckets between the first and the last non-empty cell;
// - composite: the sources' values of a doc make one long key (segment ordinals, which in one
//   segment sort as the terms; negated for "desc"; histogram and date keys; the geotile key
//   as GeoTileUtils.longEncode), kept in a bounded sorted array of `size` keys: a doc whose key
//   sorts after the last kept one once the array is full is skipped, as composite's queue does;
// - sampler: IndexSearcher.search(q, shard_size) (the top docs by score), then the terms
//   sub-aggregation over those docs' doc values;
// - percentiles: a merging t-digest written here (Dunning's k1 scale function, the same
//   compression as the request, exact while at most 20 x compression values as
//   Elasticsearch >= 8.9 and scry), fed the doc values of the hits;
// - multi_terms: counts per combination of the three fields' ordinals in a dense array, the
//   top 10 by count (ties by key).
//
// Every operation returns hits, buckets and the buckets' doc count sum to compare with scry's
// answer (bench/aggs_report.py); percentiles print their values on stderr.
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.TemporalAdjusters;
import java.util.function.LongUnaryOperator;
import org.apache.lucene.geo.GeoEncodingUtils;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.PointValues;
import org.apache.lucene.index.SortedDocValues;
import org.apache.lucene.index.SortedNumericDocValues;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.SimpleCollector;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.util.NumericUtils;

final class LuceneAggMore {
    static final long HOUR = 3600000L, DAY = 86400000L;
    static final ZoneId NY = ZoneId.of("America/New_York");

    /* ---- roundings (java.time) ---- */

    static LocalDate localDate(long t, ZoneId z) {
        return Instant.ofEpochMilli(t).atZone(z).toLocalDate();
    }

    static long startOf(LocalDate d, ZoneId z) {
        return d.atStartOfDay(z).toInstant().toEpochMilli();
    }

    static LongUnaryOperator day(ZoneId z) {
        return t -> startOf(localDate(t, z), z);
    }

    static LongUnaryOperator week(ZoneId z) {
        return t -> startOf(localDate(t, z).with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY)), z);
    }

    static LongUnaryOperator month(ZoneId z) {
        return t -> startOf(localDate(t, z).withDayOfMonth(1), z);
    }

    /* a fixed interval in a time zone: rounded in local time, as Elasticsearch does */
    static LongUnaryOperator fixed(long width, ZoneId z) {
        return t -> {
            long off = z.getRules().getOffset(Instant.ofEpochMilli(t)).getTotalSeconds() * 1000L;
            long local = Math.floorDiv(t + off, width) * width;
            LocalDateTime ldt = LocalDateTime.ofEpochSecond(Math.floorDiv(local, 1000), 0, ZoneOffset.UTC);
            return ldt.atZone(z).toInstant().toEpochMilli();
        };
    }

    /* The rounding of every hour from lo (an hour boundary) to hi: idx[h] is the bucket of
     * hour h, keys[b] its key (ascending: the roundings are monotone). */
    static final class HourTable {
        final long lo;
        final int[] idx;
        final long[] keys;

        HourTable(long lo, long hi, LongUnaryOperator round) {
            this.lo = Math.floorDiv(lo, HOUR) * HOUR;
            int nh = (int) ((hi - this.lo) / HOUR) + 1;
            idx = new int[nh];
            long[] k = new long[nh];
            int nk = 0;
            for (int h = 0; h < nh; h++) {
                long key = round.applyAsLong(this.lo + h * HOUR);
                if (nk == 0 || k[nk - 1] != key)
                    k[nk++] = key;
                idx[h] = nk - 1;
            }
            keys = java.util.Arrays.copyOf(k, nk);
        }

        int bucket(long t) {
            return idx[(int) ((t - lo) / HOUR)];
        }
    }

    /* [min, max] of a LongPoint field over the index */
    static long[] pointRange(IndexSearcher s, String field) throws java.io.IOException {
        byte[] mn = PointValues.getMinPackedValue(s.getIndexReader(), field);
        byte[] mx = PointValues.getMaxPackedValue(s.getIndexReader(), field);
        return new long[] {LongPoint.decodeDimension(mn, 0), LongPoint.decodeDimension(mx, 0)};
    }

    /* ---- metric fields: how their doc values decode ---- */

    static final int SCALED = 0, DOUBLE = 1; /* scaled_float (factor 100) as long; double as sortable long */

    static final String[] STATS3 = {"total_amount", "tip_amount", "trip_distance"};
    static final int[] STATS3_KIND = {SCALED, DOUBLE, SCALED};
    static final String[] STATS2 = {"total_amount", "trip_distance"};
    static final int[] STATS2_KIND = {SCALED, SCALED};

    /* per cell: count and, per metric field, count, sum, min, max */
    static final class Cells {
        final long[] count;
        final long[][] n;
        final double[][] sum, min, max;

        Cells(int cells, int fields) {
            count = new long[cells];
            n = new long[fields][cells];
            sum = new double[fields][cells];
            min = new double[fields][cells];
            max = new double[fields][cells];
            for (int f = 0; f < fields; f++) {
                java.util.Arrays.fill(min[f], Double.POSITIVE_INFINITY);
                java.util.Arrays.fill(max[f], Double.NEGATIVE_INFINITY);
            }
        }

        void fold(int from, Cells into, int to) {
            into.count[to] += count[from];
            for (int f = 0; f < n.length; f++) {
                into.n[f][to] += n[f][from];
                into.sum[f][to] += sum[f][from];
                into.min[f][to] = Math.min(into.min[f][to], min[f][from]);
                into.max[f][to] = Math.max(into.max[f][to], max[f][from]);
            }
        }
    }

    /* Counts (and metrics) of q's hits per cell of `field`: cell = cellOf(value). */
    interface CellOf {
        int cell(long v);
    }

    static Cells collectCells(IndexSearcher s, Query q, String field, int ncells, CellOf cellOf,
                              String[] metrics, int[] kinds, LuceneAggBench.Res res) throws Exception {
        int nf = metrics.length;
        Cells c = new Cells(ncells, nf);
        s.search(q, new SimpleCollector() {
            NumericDocValues dv;
            final NumericDocValues[] m = new NumericDocValues[nf];

            @Override
            protected void doSetNextReader(LeafReaderContext ctx) throws java.io.IOException {
                dv = DocValues.getNumeric(ctx.reader(), field);
                for (int f = 0; f < nf; f++)
                    m[f] = DocValues.getNumeric(ctx.reader(), metrics[f]);
            }

            @Override
            public void collect(int doc) throws java.io.IOException {
                res.hits++;
                if (!dv.advanceExact(doc))
                    return;
                int b = cellOf.cell(dv.longValue());
                c.count[b]++;
                for (int f = 0; f < nf; f++) {
                    if (!m[f].advanceExact(doc))
                        continue;
                    long raw = m[f].longValue();
                    double v = kinds[f] == SCALED ? raw / 100.0 : NumericUtils.sortableLongToDouble(raw);
                    c.n[f][b]++;
                    c.sum[f][b] += v;
                    if (v < c.min[f][b])
                        c.min[f][b] = v;
                    if (v > c.max[f][b])
                        c.max[f][b] = v;
                }
            }

            @Override
            public ScoreMode scoreMode() {
                return ScoreMode.COMPLETE_NO_SCORES;
            }
        });
        return c;
    }

    static LuceneAggBench.Res close(LuceneAggBench.Res res, long[] count) {
        for (long x : count)
            if (x > 0) {
                res.buckets++;
                res.sum += x;
            }
        return res;
    }

    /* date_histogram of `field` over q's hits in [lo, hi] with `round` (java.time), with the
     * metrics sub-aggregations: the rounding looked up per hour */
    static LuceneAggBench.Res dateHisto(IndexSearcher s, Query q, String field, long lo, long hi,
                                        LongUnaryOperator round, String[] metrics, int[] kinds)
        throws Exception {
        HourTable t = new HourTable(lo, hi, round);
        LuceneAggBench.Res res = new LuceneAggBench.Res();
        Cells c = collectCells(s, q, field, t.keys.length, t::bucket, metrics, kinds, res);
        return close(res, c.count);
    }

    /* auto_date_histogram (minimum_interval day) of `field` over q's hits in [lo, hi], at most
     * `target` buckets: hour cells, then the first rounding of the ladder whose span from the
     * first to the last non-empty cell fits, buckets aligned as Elasticsearch's innerIntervals
     * (multiples of the interval from the epoch in local days, months or years) */
    static LuceneAggBench.Res autoDate(IndexSearcher s, Query q, String field, long lo, long hi,
                                       int target, ZoneId z, String[] metrics, int[] kinds)
        throws Exception {
        LuceneAggBench.Res res = new LuceneAggBench.Res();
        long lo0 = Math.floorDiv(lo, HOUR) * HOUR;
        int nh = (int) ((hi - lo0) / HOUR) + 1;
        Cells c = collectCells(s, q, field, nh, v -> (int) ((v - lo0) / HOUR), metrics, kinds, res);
        int first = 0, last = nh - 1;
        while (first < nh && c.count[first] == 0)
            first++;
        while (last > first && c.count[last] == 0)
            last--;
        if (first == nh)
            return res;
        /* the ladder: (unit, multiple); unit 0 = day, 1 = month, 2 = year */
        int[][] ladder = {{0, 1}, {0, 7}, {1, 1}, {1, 3}, {2, 1}, {2, 5}, {2, 10}, {2, 20}, {2, 50}, {2, 100}};
        LocalDate a = localDate(lo0 + first * HOUR, z), b = localDate(lo0 + last * HOUR, z);
        int[] pick = ladder[ladder.length - 1];
        for (int[] l : ladder)
            if (unitIndex(b, l) - unitIndex(a, l) + 1 <= target) {
                pick = l;
                break;
            }
        long base = unitIndex(a, pick);
        int nb = (int) (unitIndex(b, pick) - base + 1);
        Cells out = new Cells(nb, metrics.length);
        for (int h = first; h <= last; h++)
            if (c.count[h] > 0)
                c.fold(h, out, (int) (unitIndex(localDate(lo0 + h * HOUR, z), pick) - base));
        return close(res, out.count);
    }

    static long unitIndex(LocalDate d, int[] l) {
        long u = l[0] == 0 ? d.toEpochDay() : l[0] == 1 ? (d.getYear() - 1970) * 12L + d.getMonthValue() - 1
                                                        : d.getYear() - 1970L;
        return Math.floorDiv(u, l[1]);
    }

    /* ---- composite: a bounded sorted array of long keys ---- */

    static final class TopKeys {
        final long[] keys;
        final long[] counts;
        int n;

        TopKeys(int size) {
            keys = new long[size];
            counts = new long[size];
        }

        void add(long key) {
            if (n == keys.length && key > keys[n - 1])
                return; /* after the page: skipped */
            int i = java.util.Arrays.binarySearch(keys, 0, n, key);
            if (i >= 0) {
                counts[i]++;
                return;
            }
            i = -i - 1;
            int move = (n == keys.length ? n - 1 : n) - i;
            if (move > 0) {
                System.arraycopy(keys, i, keys, i + 1, move);
                System.arraycopy(counts, i, counts, i + 1, move);
            }
            keys[i] = key;
            counts[i] = 1;
            if (n < keys.length)
                n++;
        }

        LuceneAggBench.Res res(long hits) {
            LuceneAggBench.Res r = new LuceneAggBench.Res();
            r.hits = hits;
            for (int i = 0; i < n; i++) {
                r.buckets++;
                r.sum += counts[i];
            }
            return r;
        }
    }

    /* one source of a composite key: the key part of a doc (a long), or Long.MIN_VALUE for none */
    interface KeySource {
        void setLeaf(LeafReaderContext c) throws java.io.IOException;

        long part(int doc) throws java.io.IOException;

        long cardinality(); /* the parts' range (multiplier of the sources after it) */
    }

    static final long NONE = Long.MIN_VALUE;

    /* a keyword's segment ordinal (asc or desc) */
    static KeySource terms(String field, boolean desc) {
        return new KeySource() {
            SortedDocValues dv;
            long n;

            public void setLeaf(LeafReaderContext c) throws java.io.IOException {
                dv = DocValues.unwrapSingleton(DocValues.getSortedSet(c.reader(), field));
                if (dv == null)
                    throw new IllegalStateException(field + " is not single-valued");
                n = dv.getValueCount();
            }

            public long part(int doc) throws java.io.IOException {
                if (!dv.advanceExact(doc))
                    return NONE;
                int o = dv.ordValue();
                return desc ? n - 1 - o : o;
            }

            public long cardinality() {
                return n;
            }
        };
    }

    static LuceneAggBench.Res composite(IndexSearcher s, Query q, int size, KeySource... src)
        throws Exception {
        if (s.getIndexReader().leaves().size() != 1)
            throw new IllegalStateException("composite of ordinals: one segment expected");
        TopKeys top = new TopKeys(size);
        long[] hits = new long[1];
        s.search(q, new SimpleCollector() {
            long[] mult = new long[src.length];

            @Override
            protected void doSetNextReader(LeafReaderContext c) throws java.io.IOException {
                long m = 1;
                for (int i = src.length; i-- > 0;) {
                    src[i].setLeaf(c);
                    mult[i] = m;
                    m *= Math.max(1, src[i].cardinality());
                }
            }

            @Override
            public void collect(int doc) throws java.io.IOException {
                hits[0]++;
                long key = 0;
                for (int i = 0; i < src.length; i++) {
                    long p = src[i].part(doc);
                    if (p == NONE)
                        return;
                    key += p * mult[i];
                }
                top.add(key);
            }

            @Override
            public ScoreMode scoreMode() {
                return ScoreMode.COMPLETE_NO_SCORES;
            }
        });
        return top.res(hits[0]);
    }

    /* composite with one numeric source: the key computed from the field's value */
    static LuceneAggBench.Res compositeNumeric(IndexSearcher s, Query q, int size, String field,
                                               LongUnaryOperator keyOf) throws Exception {
        TopKeys top = new TopKeys(size);
        long[] hits = new long[1];
        s.search(q, new SimpleCollector() {
            NumericDocValues dv;

            @Override
            protected void doSetNextReader(LeafReaderContext c) throws java.io.IOException {
                dv = DocValues.getNumeric(c.reader(), field);
            }

            @Override
            public void collect(int doc) throws java.io.IOException {
                hits[0]++;
                if (dv.advanceExact(doc))
                    top.add(keyOf.applyAsLong(dv.longValue()));
            }

            @Override
            public ScoreMode scoreMode() {
                return ScoreMode.COMPLETE_NO_SCORES;
            }
        });
        return top.res(hits[0]);
    }

    /* Elasticsearch's GeoTileUtils.longEncode of a point at zoom z */
    static long geotile(int z, double lat, double lon) {
        double tiles = 1L << z;
        double x = Math.floor((lon + 180.0) / 360.0 * tiles);
        double ls = Math.sin(Math.toRadians(lat));
        double y = Math.floor((0.5 - Math.log((1.0 + ls) / (1.0 - ls)) / (4.0 * Math.PI)) * tiles);
        x = x < 0 || Double.isNaN(x) ? 0 : x >= tiles ? tiles - 1 : x;
        y = y < 0 || Double.isNaN(y) ? 0 : y >= tiles ? tiles - 1 : y;
        return ((long) z << 58) | ((long) x << 29) | (long) y;
    }

    /* composite(geotile_grid of a geo_point field at zoom z): the tile of each point
     * (LatLonDocValuesField), a doc's distinct tiles each counted once */
    static LuceneAggBench.Res compositeGeotile(IndexSearcher s, Query q, int size, String field,
                                               int z) throws Exception {
        TopKeys top = new TopKeys(size);
        long[] hits = new long[1];
        s.search(q, new SimpleCollector() {
            SortedNumericDocValues dv;

            @Override
            protected void doSetNextReader(LeafReaderContext c) throws java.io.IOException {
                dv = DocValues.getSortedNumeric(c.reader(), field);
            }

            @Override
            public void collect(int doc) throws java.io.IOException {
                hits[0]++;
                if (!dv.advanceExact(doc))
                    return;
                int n = dv.docValueCount();
                long prev = NONE;
                for (int i = 0; i < n; i++) {
                    long v = dv.nextValue();
                    long k = geotile(z, GeoEncodingUtils.decodeLatitude((int) (v >>> 32)),
                                     GeoEncodingUtils.decodeLongitude((int) v));
                    if (n == 1 || k != prev) /* these docs have one point each */
                        top.add(k);
                    prev = k;
                }
            }

            @Override
            public ScoreMode scoreMode() {
                return ScoreMode.COMPLETE_NO_SCORES;
            }
        });
        return top.res(hits[0]);
    }

    /* ---- sampler: the top shard_size docs by score, then terms over them ---- */

    static LuceneAggBench.Res sampler(IndexSearcher s, Query q, int shardSize, String field,
                                      boolean keyword) throws Exception {
        TopDocs td = s.search(q, shardSize);
        java.util.Arrays.sort(td.scoreDocs, (x, y) -> Integer.compare(x.doc, y.doc));
        java.util.HashMap<Object, long[]> counts = new java.util.HashMap<>();
        java.util.List<LeafReaderContext> leaves = s.getIndexReader().leaves();
        int li = -1;
        LeafReaderContext c = null;
        SortedDocValues kd = null;
        NumericDocValues nd = null;
        for (ScoreDoc sd : td.scoreDocs) {
            while (c == null || sd.doc >= c.docBase + c.reader().maxDoc()) {
                c = leaves.get(++li);
                if (keyword)
                    kd = DocValues.unwrapSingleton(DocValues.getSortedSet(c.reader(), field));
                else
                    nd = DocValues.getNumeric(c.reader(), field);
            }
            int d = sd.doc - c.docBase;
            Object k;
            if (keyword) {
                if (!kd.advanceExact(d))
                    continue;
                k = kd.lookupOrd(kd.ordValue()).utf8ToString();
            } else {
                if (!nd.advanceExact(d))
                    continue;
                k = nd.longValue();
            }
            counts.computeIfAbsent(k, x -> new long[1])[0]++;
        }
        LuceneAggBench.Res res = new LuceneAggBench.Res();
        res.hits = td.totalHits.value;
        for (long[] x : counts.values()) {
            res.buckets++;
            res.sum += x[0];
        }
        return res;
    }

    /* ---- percentiles: a merging t-digest ---- */

    static final class TDigest {
        final double compression;
        /* the exact phase: every value while total <= 20 x compression */
        double[] exact = new double[64];
        boolean digest;
        /* the digest phase: centroids (sorted by mean) and an unsorted buffer */
        double[] mean, weight;
        int nc;
        double[] buf;
        int nb;
        long total;
        double min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY;

        TDigest(double compression) {
            this.compression = compression;
        }

        void add(double x) {
            if (x < min)
                min = x;
            if (x > max)
                max = x;
            if (!digest) {
                if (total == exact.length)
                    exact = java.util.Arrays.copyOf(exact, exact.length * 2);
                exact[(int) total++] = x;
                if (total > 20 * compression)
                    toDigest();
                return;
            }
            if (nb == buf.length)
                merge();
            buf[nb++] = x;
            total++;
        }

        void toDigest() {
            digest = true;
            int cap = (int) Math.ceil(compression * Math.PI / 2) + 8;
            mean = new double[cap];
            weight = new double[cap];
            buf = new double[(int) (5 * compression)];
            long n = total;
            total = 0;
            for (int i = 0; i < n; i++) {
                if (nb == buf.length)
                    merge();
                buf[nb++] = exact[i];
                total++;
            }
            exact = null;
        }

        double k(double q) {
            return compression / (2 * Math.PI) * Math.asin(2 * q - 1);
        }

        /* sorts the buffer and merges it with the centroids: a centroid grows while its span
         * in k stays within 1 */
        void merge() {
            if (nb == 0)
                return;
            java.util.Arrays.sort(buf, 0, nb);
            double[] m = new double[nc + nb], w = new double[nc + nb];
            int i = 0, j = 0, n = 0;
            while (i < nc || j < nb) { /* merge the sorted centroids and the sorted buffer */
                if (j >= nb || (i < nc && mean[i] <= buf[j])) {
                    m[n] = mean[i];
                    w[n++] = weight[i++];
                } else {
                    m[n] = buf[j++];
                    w[n++] = 1;
                }
            }
            double tot = total;
            int out = 0;
            double soFar = 0, cm = m[0], cw = w[0], kLeft = k(0);
            for (int x = 1; x < n; x++) {
                double kRight = k(Math.min(1.0, (soFar + cw + w[x]) / tot));
                if (kRight - kLeft <= 1) {
                    cw += w[x];
                    cm += (m[x] - cm) * w[x] / cw;
                } else {
                    out = put(out, cm, cw);
                    soFar += cw;
                    kLeft = k(soFar / tot);
                    cm = m[x];
                    cw = w[x];
                }
            }
            out = put(out, cm, cw);
            nc = out;
            nb = 0;
        }

        int put(int at, double m, double w) {
            if (at == mean.length) {
                mean = java.util.Arrays.copyOf(mean, at * 2);
                weight = java.util.Arrays.copyOf(weight, at * 2);
            }
            mean[at] = m;
            weight[at] = w;
            return at + 1;
        }

        /* the value at quantile q: linear between the knots (index 0 at min, each centroid's
         * mean at the index of its centre, total - 1 at max) */
        double quantile(double q) {
            if (total == 0)
                return Double.NaN;
            double idx = q * (total - 1);
            if (!digest) {
                double[] v = java.util.Arrays.copyOf(exact, (int) total);
                java.util.Arrays.sort(v);
                int lo = (int) Math.floor(idx);
                int hi = Math.min(lo + 1, v.length - 1);
                return v[lo] + (v[hi] - v[lo]) * (idx - lo);
            }
            merge();
            double px = 0, pv = min, at = 0;
            for (int i = 0; i < nc; i++) {
                double cx = at + weight[i] / 2 - 0.5;
                at += weight[i];
                cx = Math.max(0, Math.min(total - 1, cx));
                if (idx <= cx)
                    return cx == px ? mean[i] : pv + (mean[i] - pv) * (idx - px) / (cx - px);
                px = cx;
                pv = mean[i];
            }
            double cx = total - 1;
            return cx == px ? max : pv + (max - pv) * (idx - px) / (cx - px);
        }
    }

    static final double[] PERCENTS = {70, 80, 90, 95, 99};
    static boolean[] shown = new boolean[2];

    static LuceneAggBench.Res percentiles(IndexSearcher s, Query q, String field, double compression,
                                          int show) throws Exception {
        TDigest t = new TDigest(compression);
        LuceneAggBench.Res res = new LuceneAggBench.Res();
        s.search(q, new SimpleCollector() {
            NumericDocValues dv;

            @Override
            protected void doSetNextReader(LeafReaderContext c) throws java.io.IOException {
                dv = DocValues.getNumeric(c.reader(), field);
            }

            @Override
            public void collect(int doc) throws java.io.IOException {
                res.hits++;
                if (dv.advanceExact(doc))
                    t.add(dv.longValue() / 100.0); /* a scaled_float, factor 100 */
            }

            @Override
            public ScoreMode scoreMode() {
                return ScoreMode.COMPLETE_NO_SCORES;
            }
        });
        StringBuilder sb = new StringBuilder();
        for (double p : PERCENTS) {
            double v = t.quantile(p / 100);
            if (Double.isNaN(v))
                throw new IllegalStateException("no " + field + " values");
            sb.append(sb.length() > 0 ? "," : "").append(v);
        }
        res.buckets = 1;
        res.sum = t.total;
        res.values = sb.toString();
        return res;
    }

    /* ---- multi_terms: counts per combination of ordinals, the top 10 by count ---- */

    static LuceneAggBench.Res multiTerms(IndexSearcher s, Query q, int size, String... fields)
        throws Exception {
        if (s.getIndexReader().leaves().size() != 1)
            throw new IllegalStateException("multi_terms of ordinals: one segment expected");
        LeafReaderContext leaf = s.getIndexReader().leaves().get(0);
        int nf = fields.length;
        long[] mult = new long[nf];
        long m = 1;
        for (int i = nf; i-- > 0;) {
            mult[i] = m;
            m *= Math.max(1, DocValues.getSortedSet(leaf.reader(), fields[i]).getValueCount());
        }
        if (m > 1 << 24)
            throw new IllegalStateException("multi_terms: too many combinations for an array");
        long[] count = new long[(int) m];
        long[] hits = new long[1];
        s.search(q, new SimpleCollector() {
            final SortedDocValues[] dv = new SortedDocValues[nf];

            @Override
            protected void doSetNextReader(LeafReaderContext c) throws java.io.IOException {
                for (int i = 0; i < nf; i++)
                    dv[i] = DocValues.unwrapSingleton(DocValues.getSortedSet(c.reader(), fields[i]));
            }

            @Override
            public void collect(int doc) throws java.io.IOException {
                hits[0]++;
                int key = 0;
                for (int i = 0; i < nf; i++) {
                    if (!dv[i].advanceExact(doc))
                        return;
                    key += dv[i].ordValue() * (int) mult[i];
                }
                count[key]++;
            }

            @Override
            public ScoreMode scoreMode() {
                return ScoreMode.COMPLETE_NO_SCORES;
            }
        });
        /* the top `size` by count, ties by key (ordinals sort as the terms) */
        Integer[] order = new Integer[count.length];
        for (int i = 0; i < order.length; i++)
            order[i] = i;
        java.util.Arrays.sort(order, (x, y) -> count[x] != count[y] ? Long.compare(count[y], count[x])
                                                                  : Integer.compare(x, y));
        LuceneAggBench.Res res = new LuceneAggBench.Res();
        res.hits = hits[0];
        for (int i = 0; i < Math.min(size, order.length) && count[order[i]] > 0; i++) {
            res.buckets++;
            res.sum += count[order[i]];
        }
        return res;
    }

    /* ---- the operations ---- */

    static void ops(IndexSearcher s, int runs) throws Exception {
        long jan = LocalDate.of(2015, 1, 1).toEpochDay() * DAY;
        long feb = LocalDate.of(2015, 2, 1).toEpochDay() * DAY - 1;
        long mar = LocalDate.of(2015, 3, 1).toEpochDay() * DAY - 1;
        long jan15 = LocalDate.of(2015, 1, 15).toEpochDay() * DAY - 1;
        Query twoMonths = LongPoint.newRangeQuery("dropoff_datetime", jan, mar);
        Query oneMonth = LongPoint.newRangeQuery("dropoff_datetime", jan, feb);
        Query twoWeeks = LongPoint.newRangeQuery("dropoff_datetime", jan, jan15);
        String[] none = {};
        int[] noneK = {};
        ZoneId utc = ZoneOffset.UTC;
        String dr = "dropoff_datetime";
        LuceneAggBench.time("date_histogram_calendar_interval_with_tz", "doc-values loop (java.time per hour)",
            () -> dateHisto(s, twoMonths, dr, jan, mar, week(NY), none, noneK), runs);
        LuceneAggBench.time("date_histogram_fixed_interval_with_tz", "doc-values loop (java.time per hour)",
            () -> dateHisto(s, twoMonths, dr, jan, mar, fixed(10 * DAY, NY), none, noneK), runs);
        LuceneAggBench.time("date_histogram_fixed_interval_with_metrics", "doc-values loop",
            () -> dateHisto(s, twoMonths, dr, jan, mar, fixed(10 * DAY, utc), STATS3, STATS3_KIND), runs);
        LuceneAggBench.time("date_histogram_fixed_interval_with_metrics_agg", "doc-values loop",
            () -> dateHisto(s, twoMonths, dr, jan, mar, fixed(10 * DAY, utc), STATS2, STATS2_KIND), runs);
        LuceneAggBench.time("auto_date_histogram", "doc-values loop (hour cells, ladder)",
            () -> autoDate(s, twoMonths, dr, jan, mar, 10, utc, none, noneK), runs);
        LuceneAggBench.time("auto_date_histogram_with_tz", "doc-values loop (hour cells, ladder)",
            () -> autoDate(s, twoMonths, dr, jan, mar, 10, NY, none, noneK), runs);
        LuceneAggBench.time("auto_date_histogram_with_metrics", "doc-values loop (hour cells, ladder)",
            () -> autoDate(s, twoMonths, dr, jan, mar, 10, utc, STATS3, STATS3_KIND), runs);
        LuceneAggBench.time("composite-terms", "doc-values loop (ordinals, bounded sorted keys)",
            () -> composite(s, oneMonth, 10, terms("vendor_id", true), terms("payment_type", false)), runs);
        LuceneAggBench.time("composite_terms-keyword", "doc-values loop (ordinals, bounded sorted keys)",
            () -> composite(s, oneMonth, 10, terms("trip_type", false), terms("payment_type", false),
                            terms("vendor_id", false)), runs);
        LuceneAggBench.time("composite-histogram", "doc-values loop (bounded sorted keys)",
            () -> compositeNumeric(s, twoMonths, 10, "total_amount", v -> Math.floorDiv(v, 500)), runs);
        if (LuceneAggBench.wanted("composite-date_histogram")) {
            long[] pr = pointRange(s, "pickup_datetime");
            String[] names = {"daily", "weekly", "monthly"};
            LongUnaryOperator[] rounds = {day(utc), week(utc), month(utc)};
            for (int i = 0; i < 3; i++) {
                HourTable t = new HourTable(pr[0], pr[1], rounds[i]);
                LuceneAggBench.time("composite-date_histogram-" + names[i],
                    "doc-values loop (java.time per hour, bounded sorted keys)",
                    () -> compositeNumeric(s, twoMonths, 10, "pickup_datetime", v -> t.keys[t.bucket(v)]), runs);
            }
        }
        for (int z : new int[] {8, 12, 15})
            LuceneAggBench.time("composite-geotile_grid-precision-" + z,
                "doc-values loop (LatLonDocValuesField, bounded sorted keys)",
                () -> compositeGeotile(s, oneMonth, 10, "pickup_location", z), runs);
        LuceneAggBench.time("sampler-keyword", "IndexSearcher.search(q, 50) + doc values",
            () -> sampler(s, twoMonths, 50, "vendor_id", true), runs);
        LuceneAggBench.time("sampler-numeric", "IndexSearcher.search(q, 50) + doc values",
            () -> sampler(s, twoMonths, 50, "passenger_count", false), runs);
        LuceneAggBench.time("percentiles-tdigest-compression-default", "doc-values loop + merging t-digest (100)",
            () -> percentiles(s, twoWeeks, "total_amount", 100, 0), runs);
        LuceneAggBench.time("percentiles-tdigest-compression-200", "doc-values loop + merging t-digest (200)",
            () -> percentiles(s, twoWeeks, "total_amount", 200, 1), runs);
        LuceneAggBench.time("multi_terms-keyword", "doc-values loop (ordinals, dense counts)",
            () -> multiTerms(s, oneMonth, 10, "trip_type", "payment_type", "vendor_id"), runs);
    }
}
