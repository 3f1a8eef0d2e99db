// Lucene 8.7 side of bench/aggs_bench.sh: the Rally nyc_taxis and http_logs aggregation
// operations (bench/workloads/taxis.aggs.txt, logs.aggs.txt) plus a keyword `terms`, computed
// on the same `scry gen` documents with Lucene's faceting module (lucene-facet:
// SortedSetDocValuesFacetCounts, LongRangeFacetCounts) and plain doc-values loops for the numeric
// histograms and stats, the way an application on Lucene would compute them.
//
//   LuceneAggBench TAXIS.ndjson LOGS.ndjson INDEX_DIR RUNS > lucene_aggs.tsv
//
// Indexes (unless INDEX_DIR/taxis and INDEX_DIR/logs exist) the fields the operations read, as
// Elasticsearch maps them: scaled_float (factor 100) trip_distance and total_amount as longs,
// dropoff_datetime and @timestamp as epoch millis (LongPoint + NumericDocValues), payment_type as
// a SortedSetDocValuesFacetField; one segment each. Then per operation: 20 JIT warm-up runs and
// RUNS timed runs, single-threaded, no query cache. Output columns: case, hits (collected docs),
// buckets, sum of bucket doc counts, median / best / worst ms (the thread's CPU time with
// LUCENE_CPU=1, else wall time), and the method used. Where two methods exist (a date
// histogram by LongRangeFacetCounts or by a doc-values loop) both are timed and both rows are
// printed; bench/aggs_report.py compares scry with the faster one. LUCENE_AGG_ONLY=NAME times
// only the operations whose name contains NAME (the indexes are still opened, or built).
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.LatLonDocValuesField;
import org.apache.lucene.document.SortedSetDocValuesField;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.document.DoublePoint;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.facet.FacetResult;
import org.apache.lucene.facet.FacetsCollector;
import org.apache.lucene.facet.FacetsConfig;
import org.apache.lucene.facet.range.LongRange;
import org.apache.lucene.facet.range.LongRangeFacetCounts;
import org.apache.lucene.facet.sortedset.DefaultSortedSetDocValuesReaderState;
import org.apache.lucene.facet.sortedset.SortedSetDocValuesFacetCounts;
import org.apache.lucene.facet.sortedset.SortedSetDocValuesFacetField;
import org.apache.lucene.facet.sortedset.SortedSetDocValuesReaderState;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.PointValues;
import org.apache.lucene.index.SortedSetDocValues;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.ConstantScoreQuery;
import org.apache.lucene.search.DoubleValues;
import org.apache.lucene.search.DoubleValuesSource;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.SimpleCollector;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.NumericUtils;

public class LuceneAggBench {
    static final long HOUR = 3600000L, DAY = 86400000L;

    public static void main(String[] args) throws Exception {
        String taxis = args[0], logs = args[1];
        Path dir = Path.of(args[2]);
        int runs = Integer.parseInt(args[3]);
        if (!Files.exists(dir.resolve("taxis")))
            indexTaxis(taxis, dir.resolve("taxis"));
        if (!Files.exists(dir.resolve("logs")))
            indexLogs(logs, dir.resolve("logs"));
        System.out.println("case\thits\tbuckets\tdoc_count_sum\tmedian_ms\tbest_ms\tworst_ms\tmethod");
        try (FSDirectory d = FSDirectory.open(dir.resolve("taxis"));
             DirectoryReader r = DirectoryReader.open(d)) {
            IndexSearcher s = new IndexSearcher(r);
            s.setQueryCache(null);
            taxisOps(s, runs);
        }
        try (FSDirectory d = FSDirectory.open(dir.resolve("logs"));
             DirectoryReader r = DirectoryReader.open(d)) {
            IndexSearcher s = new IndexSearcher(r);
            s.setQueryCache(null);
            time("hourly_agg", "doc-values loop", () -> hourly(s, "@timestamp"), runs);
        }
    }

    /* ---- the operations ---- */

    /* what one run reports, to check against scry's response */
    static final class Res {
        long hits, buckets, sum;
        String values; /* a metric's values (percentiles), comma-separated, or null */
    }

    interface Op {
        Res run() throws Exception;
    }

    /* LUCENE_CPU=1: time each run by the CPU time of this thread (the searches run on it)
     * instead of the wall clock, as scry's in-process bench/agg_bench.c does on a shared,
     * loaded machine */
    static final boolean CPU = "1".equals(System.getenv("LUCENE_CPU"));
    static final java.lang.management.ThreadMXBean THREADS =
        java.lang.management.ManagementFactory.getThreadMXBean();

    /* LUCENE_AGG_ONLY=NAME: time only the operations whose name contains NAME */
    static final String ONLY = System.getenv("LUCENE_AGG_ONLY");

    static boolean wanted(String name) {
        return ONLY == null || name.contains(ONLY);
    }

    static void time(String name, String method, Op op, int runs) throws Exception {
        if (!wanted(name))
            return;
        Res res = null;
        for (int k = 0; k < 20; k++) /* JIT warm-up */
            res = op.run();
        double[] ms = new double[runs], cpu = new double[runs];
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        for (int k = 0; k < runs; k++) {
            long c = mx.getCurrentThreadCpuTime();
            long a = System.nanoTime();
            op.run();
            cpu[k] = (mx.getCurrentThreadCpuTime() - c) / 1e6;
            /* LUCENE_CPU=1: the time columns are this thread's CPU time too */
            ms[k] = CPU ? cpu[k] : (System.nanoTime() - a) / 1e6;
        }
        java.util.Arrays.sort(ms);
        java.util.Arrays.sort(cpu);
        /* the last column: the median of the runs' CPU time of this thread (the steadier
         * number on a shared machine, where the wall time includes waits for a core) */
        System.out.printf("%s\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%s\t%.3f%s%n", name, res.hits,
                          res.buckets, res.sum, ms[runs / 2], ms[0], ms[runs - 1], method,
                          cpu[runs / 2], res.values != null ? "\t" + res.values : "");
        System.out.flush();
    }

    static void taxisOps(IndexSearcher s, int runs) throws Exception {
        /* trip_distance gte 0 lt 50 on a scaled_float (factor 100): [0, floor(nextDown(5000))] */
        Query dist = new ConstantScoreQuery(LongPoint.newRangeQuery("trip_distance", 0, 4999));
        time("distance_amount_agg", "doc-values loop", () -> distanceStats(s, dist), runs);
        long lo = java.time.LocalDate.of(2015, 1, 1).toEpochDay() * DAY;
        long hi = java.time.LocalDate.of(2015, 1, 22).toEpochDay() * DAY - 1;
        Query date = new ConstantScoreQuery(LongPoint.newRangeQuery("dropoff_datetime", lo, hi));
        time("autohisto_agg", "doc-values loop", () -> autoHisto(s, date, lo, hi), runs);
        time("date_histogram_agg", "LongRangeFacetCounts", () -> dayRanges(s, date, lo, hi), runs);
        time("date_histogram_agg", "doc-values loop", () -> dayLoop(s, date, lo, hi), runs);
        /* runtime field tip_percent = tip_amount / fare_amount (doubles) under fare_amount gt 0 */
        Query fare = new ConstantScoreQuery(DoublePoint.newRangeQuery(
            "fare_amount", Math.nextUp(0.0), Double.POSITIVE_INFINITY));
        time("avg_tip_percent_aggregation", "DoubleValuesSource", () -> avgTipPercent(s, fare),
             runs);
        if (wanted("terms_payment_type")) {
            SortedSetDocValuesReaderState st = new DefaultSortedSetDocValuesReaderState(s.getIndexReader());
            time("terms_payment_type", "SortedSetDocValuesFacetCounts", () -> terms(st, "payment_type"), runs);
        }
        if (wanted("count_group_by_keyword_aggregation")) {
            SortedSetDocValuesReaderState rst =
                new DefaultSortedSetDocValuesReaderState(s.getIndexReader(), RATE_FIELD);
            time("count_group_by_keyword_aggregation", "SortedSetDocValuesFacetCounts",
                 () -> terms(rst, "rate_code_id"), runs);
        }
        Query all = new MatchAllDocsQuery();
        time("avg_passenger_count_aggregation", "doc-values loop",
             () -> avg(s, all, "passenger_count"), runs);
        /* term rate_code_id 2 and total_amount gt 60 (scaled_float, factor 100: >= 6001) */
        Query filtered = new ConstantScoreQuery(new BooleanQuery.Builder()
            .add(new TermQuery(new Term("rate_code_id", "2")), BooleanClause.Occur.FILTER)
            .add(LongPoint.newRangeQuery("total_amount", 6001, Long.MAX_VALUE), BooleanClause.Occur.FILTER)
            .build());
        time("avg_passenger_count_filtered_aggregation", "doc-values loop",
             () -> avg(s, filtered, "passenger_count"), runs);
        time("avg_amount_group_by_integer_aggregation", "doc-values loop",
             () -> avgByInteger(s), runs);
        time("avg_amount_group_by_keyword_aggregation", "doc-values loop (ordinals)",
             () -> avgByKeyword(s), runs);
        /* [2015-01-01, 2015-03-01): weeks (Monday) and 10-day buckets from the epoch */
        long jan = java.time.LocalDate.of(2015, 1, 1).toEpochDay() * DAY;
        long mar = java.time.LocalDate.of(2015, 3, 1).toEpochDay() * DAY - 1;
        Query twoMonths = new ConstantScoreQuery(LongPoint.newRangeQuery("dropoff_datetime", jan, mar));
        long week = 7 * DAY, monday = 4 * DAY; /* 1970-01-05 was a Monday */
        time("date_histogram_calendar_interval", "doc-values loop",
             () -> fixedLoop(s, twoMonths, monday, week), runs);
        time("date_histogram_calendar_interval", "LongRangeFacetCounts",
             () -> fixedRanges(s, twoMonths, jan, mar, monday, week), runs);
        time("date_histogram_fixed_interval", "doc-values loop",
             () -> fixedLoop(s, twoMonths, 0, 10 * DAY), runs);
        time("date_histogram_fixed_interval", "LongRangeFacetCounts",
             () -> fixedRanges(s, twoMonths, jan, mar, 0, 10 * DAY), runs);
        LuceneAggMore.ops(s, runs);
    }

    static final String RATE_FIELD = "$rate_code_id";

    /* avg of an integer field's doc values over q's hits */
    static Res avg(IndexSearcher s, Query q, String field) throws Exception {
        Res res = new Res();
        long[] acc = new long[2];
        s.search(q, new SimpleCollector() {
            NumericDocValues dv;

            @Override
            protected void doSetNextReader(LeafReaderContext c) throws java.io.IOException {
                dv = DocValues.getNumeric(c.reader(), field);
            }

            @Override
            public void collect(int doc) throws java.io.IOException {
                res.hits++;
                if (dv.advanceExact(doc)) {
                    acc[0] += dv.longValue();
                    acc[1]++;
                }
            }

            @Override
            public ScoreMode scoreMode() {
                return ScoreMode.COMPLETE_NO_SCORES;
            }
        });
        if (acc[1] == 0)
            throw new IllegalStateException("no " + field + " values");
        res.buckets = 1;
        res.sum = acc[1];
        return res;
    }

    /* terms(passenger_count) > avg(total_amount) under match_all: counts and sums in arrays
     * indexed by the (small) integer value */
    static Res avgByInteger(IndexSearcher s) throws Exception {
        final int nb = 256;
        long[] count = new long[nb];
        double[] sum = new double[nb];
        Res res = new Res();
        s.search(new MatchAllDocsQuery(), new SimpleCollector() {
            NumericDocValues pc, amt;

            @Override
            protected void doSetNextReader(LeafReaderContext c) throws java.io.IOException {
                pc = DocValues.getNumeric(c.reader(), "passenger_count");
                amt = DocValues.getNumeric(c.reader(), "total_amount");
            }

            @Override
            public void collect(int doc) throws java.io.IOException {
                res.hits++;
                if (!pc.advanceExact(doc))
                    return;
                int b = (int) pc.longValue() & (nb - 1);
                count[b]++;
                if (amt.advanceExact(doc))
                    sum[b] += amt.longValue() / 100.0;
            }

            @Override
            public ScoreMode scoreMode() {
                return ScoreMode.COMPLETE_NO_SCORES;
            }
        });
        close(res, count);
        return res;
    }

    /* terms(rate_code_id) > avg(total_amount) under match_all: per segment, counts and sums
     * by the facet field's ordinals, mapped to the terms at the segment's end */
    static Res avgByKeyword(IndexSearcher s) throws Exception {
        java.util.Map<String, long[]> counts = new java.util.TreeMap<>();
        java.util.Map<String, double[]> sums = new java.util.TreeMap<>();
        Res res = new Res();
        for (LeafReaderContext c : s.getIndexReader().leaves()) {
            SortedSetDocValues ss = DocValues.getSortedSet(c.reader(), RATE_FIELD);
            NumericDocValues amt = DocValues.getNumeric(c.reader(), "total_amount");
            int n = (int) ss.getValueCount();
            long[] count = new long[n];
            double[] sum = new double[n];
            int maxDoc = c.reader().maxDoc();
            org.apache.lucene.util.Bits live = c.reader().getLiveDocs();
            for (int doc = ss.nextDoc(); doc < maxDoc; doc = ss.nextDoc()) {
                if (live != null && !live.get(doc))
                    continue;
                int o = (int) ss.nextOrd();
                count[o]++;
                if (amt.advanceExact(doc))
                    sum[o] += amt.longValue() / 100.0;
            }
            res.hits += c.reader().numDocs();
            for (int o = 0; o < n; o++) {
                String k = ss.lookupOrd(o).utf8ToString();
                counts.computeIfAbsent(k, x -> new long[1])[0] += count[o];
                sums.computeIfAbsent(k, x -> new double[1])[0] += sum[o];
            }
        }
        for (long[] c : counts.values())
            if (c[0] > 0) {
                res.buckets++;
                res.sum += c[0];
            }
        return res;
    }

    /* buckets of `width` ms from `origin` (mod width) over q's hits: a doc-values loop */
    static Res fixedLoop(IndexSearcher s, Query q, long origin, long width) throws Exception {
        java.util.HashMap<Long, long[]> b = new java.util.HashMap<>();
        Res res = new Res();
        long[] last = {Long.MIN_VALUE};
        long[][] lastCell = {null};
        s.search(q, new SimpleCollector() {
            NumericDocValues dv;

            @Override
            protected void doSetNextReader(LeafReaderContext c) throws java.io.IOException {
                dv = DocValues.getNumeric(c.reader(), "dropoff_datetime");
            }

            @Override
            public void collect(int doc) throws java.io.IOException {
                res.hits++;
                if (!dv.advanceExact(doc))
                    return;
                long k = Math.floorDiv(dv.longValue() - origin, width);
                if (k != last[0]) {
                    last[0] = k;
                    lastCell[0] = b.computeIfAbsent(k, x -> new long[1]);
                }
                lastCell[0][0]++;
            }

            @Override
            public ScoreMode scoreMode() {
                return ScoreMode.COMPLETE_NO_SCORES;
            }
        });
        for (long[] c : b.values()) {
            res.buckets++;
            res.sum += c[0];
        }
        return res;
    }

    /* the same buckets as LongRangeFacetCounts over [lo, hi] */
    static Res fixedRanges(IndexSearcher s, Query q, long lo, long hi, long origin, long width)
        throws Exception {
        long first = Math.floorDiv(lo - origin, width), lastK = Math.floorDiv(hi - origin, width);
        int nb = (int) (lastK - first + 1);
        LongRange[] ranges = new LongRange[nb];
        for (int i = 0; i < nb; i++) {
            long a = origin + (first + i) * width;
            ranges[i] = new LongRange("b" + i, a, true, a + width, false);
        }
        FacetsCollector fc = new FacetsCollector();
        s.search(q, fc);
        LongRangeFacetCounts f = new LongRangeFacetCounts("dropoff_datetime", fc, ranges);
        FacetResult r = f.getTopChildren(nb, "dropoff_datetime");
        Res res = new Res();
        for (FacetsCollector.MatchingDocs m : fc.getMatchingDocs())
            res.hits += m.totalHits;
        for (org.apache.lucene.facet.LabelAndValue lv : r.labelValues)
            if (lv.value.longValue() > 0) {
                res.buckets++;
                res.sum += lv.value.longValue();
            }
        return res;
    }

    /* A DoubleValuesSource computing tip_amount / fare_amount per doc from the two double
     * fields' doc values (sortable-long encoded, as Elasticsearch stores doubles): what an
     * expression (lucene-expressions) over the two fields would bind, without its compiler. */
    static final class TipPercent extends DoubleValuesSource {
        @Override
        public DoubleValues getValues(LeafReaderContext c, DoubleValues scores)
            throws java.io.IOException {
            NumericDocValues tip = DocValues.getNumeric(c.reader(), "tip_amount");
            NumericDocValues fare = DocValues.getNumeric(c.reader(), "fare_amount");
            return new DoubleValues() {
                double v;

                @Override
                public double doubleValue() {
                    return v;
                }

                @Override
                public boolean advanceExact(int doc) throws java.io.IOException {
                    if (!tip.advanceExact(doc) || !fare.advanceExact(doc))
                        return false;
                    v = NumericUtils.sortableLongToDouble(tip.longValue()) /
                        NumericUtils.sortableLongToDouble(fare.longValue());
                    return true;
                }
            };
        }

        @Override
        public boolean needsScores() {
            return false;
        }

        @Override
        public DoubleValuesSource rewrite(IndexSearcher s) {
            return this;
        }

        @Override
        public int hashCode() {
            return 1;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof TipPercent;
        }

        @Override
        public String toString() {
            return "tip_amount / fare_amount";
        }

        @Override
        public boolean isCacheable(LeafReaderContext c) {
            return false;
        }
    }

    /* avg of the tip_percent values over q's hits (one bucket: the metric) */
    static boolean tipShown;

    static Res avgTipPercent(IndexSearcher s, Query q) throws Exception {
        Res res = new Res();
        double[] sum = new double[1];
        long[] n = new long[1];
        DoubleValuesSource src = new TipPercent();
        s.search(q, new SimpleCollector() {
            DoubleValues v;

            @Override
            protected void doSetNextReader(LeafReaderContext c) throws java.io.IOException {
                v = src.getValues(c, null);
            }

            @Override
            public void collect(int doc) throws java.io.IOException {
                res.hits++;
                if (v.advanceExact(doc)) {
                    sum[0] += v.doubleValue();
                    n[0]++;
                }
            }

            @Override
            public ScoreMode scoreMode() {
                return ScoreMode.COMPLETE_NO_SCORES;
            }
        });
        res.buckets = 1;
        res.sum = n[0];
        if (Double.isNaN(sum[0] / n[0]))
            throw new IllegalStateException("no tip_percent values");
        if (!tipShown) { /* to check against scry's answer */
            System.err.printf("lucene: avg_tip_percent = %.17g over %d docs%n", sum[0] / n[0], n[0]);
            tipShown = true;
        }
        return res;
    }

    /* histogram(trip_distance, interval 1) > stats(total_amount) over the range's hits */
    static Res distanceStats(IndexSearcher s, Query q) throws Exception {
        final int nb = 64;
        long[] count = new long[nb];
        double[] sum = new double[nb], min = new double[nb], max = new double[nb];
        java.util.Arrays.fill(min, Double.POSITIVE_INFINITY);
        java.util.Arrays.fill(max, Double.NEGATIVE_INFINITY);
        Res res = new Res();
        s.search(q, new SimpleCollector() {
            NumericDocValues dv, amt;

            @Override
            protected void doSetNextReader(LeafReaderContext c) throws java.io.IOException {
                dv = DocValues.getNumeric(c.reader(), "trip_distance");
                amt = DocValues.getNumeric(c.reader(), "total_amount");
            }

            @Override
            public void collect(int doc) throws java.io.IOException {
                res.hits++;
                if (!dv.advanceExact(doc))
                    return;
                int b = (int) Math.floor(dv.longValue() / 100.0);
                count[b]++;
                if (amt.advanceExact(doc)) {
                    double v = amt.longValue() / 100.0;
                    sum[b] += v;
                    min[b] = Math.min(min[b], v);
                    max[b] = Math.max(max[b], v);
                }
            }

            @Override
            public ScoreMode scoreMode() {
                return ScoreMode.COMPLETE_NO_SCORES;
            }
        });
        for (int b = 0; b < nb; b++)
            if (count[b] > 0) {
                res.buckets++;
                res.sum += count[b];
            }
        return res;
    }

    /* counts per UTC hour of `field` over q's hits into an array from lo (inclusive) */
    static long[] hourCounts(IndexSearcher s, Query q, String field, long lo, int nh, Res res)
        throws Exception {
        long[] c = new long[nh];
        s.search(q, new SimpleCollector() {
            NumericDocValues dv;

            @Override
            protected void doSetNextReader(LeafReaderContext ctx) throws java.io.IOException {
                dv = DocValues.getNumeric(ctx.reader(), field);
            }

            @Override
            public void collect(int doc) throws java.io.IOException {
                res.hits++;
                if (dv.advanceExact(doc))
                    c[(int) ((dv.longValue() - lo) / HOUR)]++;
            }

            @Override
            public ScoreMode scoreMode() {
                return ScoreMode.COMPLETE_NO_SCORES;
            }
        });
        return c;
    }

    static void close(Res res, long[] c) {
        for (long x : c)
            if (x > 0) {
                res.buckets++;
                res.sum += x;
            }
    }

    /* auto_date_histogram with 20 target buckets: hourly counts, then the first rounding of
     * the ladder (1h, 3h, 12h, 1d, 7d) whose span from the first to the last non-empty hour
     * fits 20 buckets, buckets counted from the first key as Elasticsearch merges them */
    static Res autoHisto(IndexSearcher s, Query q, long lo, long hi) throws Exception {
        Res res = new Res();
        int nh = (int) ((hi - lo) / HOUR) + 1;
        long[] h = hourCounts(s, q, "dropoff_datetime", lo, nh, res);
        int first = 0, last = nh - 1;
        while (first < nh && h[first] == 0)
            first++;
        while (last > first && h[last] == 0)
            last--;
        int[] ladder = {1, 3, 12, 24, 168};
        int step = ladder[ladder.length - 1];
        for (int l : ladder)
            if ((last / l) - (first / l) + 1 <= 20) {
                step = l;
                break;
            }
        long[] merged = new long[nh / step + 1];
        for (int i = first; i <= last; i++)
            merged[(i - first) / step] += h[i];
        close(res, merged);
        return res;
    }

    static Res dayRanges(IndexSearcher s, Query q, long lo, long hi) throws Exception {
        int nd = (int) ((hi - lo) / DAY) + 1;
        LongRange[] ranges = new LongRange[nd];
        for (int i = 0; i < nd; i++)
            ranges[i] = new LongRange("d" + i, lo + i * DAY, true, lo + (i + 1) * DAY, false);
        FacetsCollector fc = new FacetsCollector();
        s.search(q, fc);
        LongRangeFacetCounts f = new LongRangeFacetCounts("dropoff_datetime", fc, ranges);
        FacetResult r = f.getTopChildren(nd, "dropoff_datetime");
        Res res = new Res();
        for (FacetsCollector.MatchingDocs m : fc.getMatchingDocs())
            res.hits += m.totalHits;
        for (org.apache.lucene.facet.LabelAndValue lv : r.labelValues)
            if (lv.value.longValue() > 0) {
                res.buckets++;
                res.sum += lv.value.longValue();
            }
        return res;
    }

    static Res dayLoop(IndexSearcher s, Query q, long lo, long hi) throws Exception {
        Res res = new Res();
        int nh = (int) ((hi - lo) / HOUR) + 1;
        long[] h = hourCounts(s, q, "dropoff_datetime", lo, nh, res);
        long[] d = new long[nh / 24 + 1];
        for (int i = 0; i < nh; i++)
            d[i / 24] += h[i];
        close(res, d);
        return res;
    }

    /* date_histogram(calendar_interval hour) under match_all; the value range from the points */
    static Res hourly(IndexSearcher s, String field) throws Exception {
        byte[] mn = PointValues.getMinPackedValue(s.getIndexReader(), field);
        byte[] mx = PointValues.getMaxPackedValue(s.getIndexReader(), field);
        long lo = Math.floorDiv(LongPoint.decodeDimension(mn, 0), HOUR) * HOUR;
        int nh = (int) ((LongPoint.decodeDimension(mx, 0) - lo) / HOUR) + 1;
        Res res = new Res();
        close(res, hourCounts(s, new MatchAllDocsQuery(), field, lo, nh, res));
        return res;
    }

    /* terms(payment_type) under match_all: the facet module's count-all path */
    static Res terms(SortedSetDocValuesReaderState st, String dim) throws Exception {
        SortedSetDocValuesFacetCounts f = new SortedSetDocValuesFacetCounts(st);
        FacetResult r = f.getTopChildren(10, dim);
        Res res = new Res();
        res.hits = st.getReader().maxDoc();
        for (org.apache.lucene.facet.LabelAndValue lv : r.labelValues) {
            res.buckets++;
            res.sum += lv.value.longValue();
        }
        return res;
    }

    /* ---- indexing ---- */

    static void indexTaxis(String file, Path dir) throws Exception {
        long t0 = System.nanoTime();
        FacetsConfig cfg = new FacetsConfig();
        /* its own facet field, so counting payment_type does not walk rate_code_id's ordinals */
        cfg.setIndexFieldName("rate_code_id", RATE_FIELD);
        int n = 0;
        try (FSDirectory d = FSDirectory.open(dir); IndexWriter w = new IndexWriter(d, wcfg());
             java.io.BufferedReader r = Files.newBufferedReader(Path.of(file))) {
            for (String line; (line = r.readLine()) != null;) {
                if (line.isEmpty() || line.startsWith("{\"index\""))
                    continue;
                Document doc = new Document();
                long dist = Math.round(Double.parseDouble(
                    TaxisCases.number(line, TaxisCases.field(line, "trip_distance"))) * 100.0);
                long amt = Math.round(Double.parseDouble(
                    TaxisCases.number(line, TaxisCases.field(line, "total_amount"))) * 100.0);
                long dr = TaxisCases.millis(line, TaxisCases.field(line, "dropoff_datetime") + 1);
                double fare = Double.parseDouble(
                    TaxisCases.number(line, TaxisCases.field(line, "fare_amount")));
                double tip = Double.parseDouble(
                    TaxisCases.number(line, TaxisCases.field(line, "tip_amount")));
                int p = TaxisCases.field(line, "payment_type") + 1;
                String pay = line.substring(p, line.indexOf('"', p));
                int rp = TaxisCases.field(line, "rate_code_id") + 1;
                String rate = line.substring(rp, line.indexOf('"', rp));
                long pc = Long.parseLong(TaxisCases.number(line, TaxisCases.field(line, "passenger_count")));
                doc.add(new LongPoint("trip_distance", dist));
                doc.add(new NumericDocValuesField("trip_distance", dist));
                doc.add(new NumericDocValuesField("total_amount", amt));
                doc.add(new LongPoint("total_amount", amt));
                doc.add(new NumericDocValuesField("passenger_count", pc));
                doc.add(new StringField("rate_code_id", rate, Field.Store.NO));
                doc.add(new SortedSetDocValuesFacetField("rate_code_id", rate));
                doc.add(new DoublePoint("fare_amount", fare));
                doc.add(new NumericDocValuesField("fare_amount", NumericUtils.doubleToSortableLong(fare)));
                doc.add(new NumericDocValuesField("tip_amount", NumericUtils.doubleToSortableLong(tip)));
                doc.add(new LongPoint("dropoff_datetime", dr));
                doc.add(new NumericDocValuesField("dropoff_datetime", dr));
                doc.add(new SortedSetDocValuesFacetField("payment_type", pay));
                /* for composite, multi_terms and sampler (bench/LuceneAggMore.java): the
                 * keywords' doc values, pickup_datetime and pickup_location as mapped */
                doc.add(new SortedSetDocValuesField("payment_type", new BytesRef(pay)));
                int vp = TaxisCases.field(line, "vendor_id") + 1;
                doc.add(new SortedSetDocValuesField("vendor_id", new BytesRef(line.substring(vp, line.indexOf('"', vp)))));
                int tp = TaxisCases.field(line, "trip_type") + 1;
                doc.add(new SortedSetDocValuesField("trip_type", new BytesRef(line.substring(tp, line.indexOf('"', tp)))));
                long pk = TaxisCases.millis(line, TaxisCases.field(line, "pickup_datetime") + 1);
                doc.add(new LongPoint("pickup_datetime", pk));
                doc.add(new NumericDocValuesField("pickup_datetime", pk));
                int lp = TaxisCases.field(line, "pickup_location") + 1; /* [lon,lat] */
                int comma = line.indexOf(',', lp);
                double lon = Double.parseDouble(line.substring(lp, comma));
                double lat = Double.parseDouble(line.substring(comma + 1, line.indexOf(']', comma)));
                doc.add(new LatLonDocValuesField("pickup_location", lat, lon));
                w.addDocument(cfg.build(doc));
                n++;
            }
            w.forceMerge(1);
        }
        System.err.printf("lucene: indexed %d taxis docs + force-merged in %.1f s%n", n,
                          (System.nanoTime() - t0) / 1e9);
    }

    static void indexLogs(String file, Path dir) throws Exception {
        long t0 = System.nanoTime();
        int n = 0;
        try (FSDirectory d = FSDirectory.open(dir); IndexWriter w = new IndexWriter(d, wcfg());
             java.io.BufferedReader r = Files.newBufferedReader(Path.of(file))) {
            LongPoint tsP = new LongPoint("@timestamp", 0);
            NumericDocValuesField tsD = new NumericDocValuesField("@timestamp", 0);
            Document doc = new Document();
            doc.add(tsP);
            doc.add(tsD);
            for (String line; (line = r.readLine()) != null;) {
                if (line.isEmpty() || line.startsWith("{\"index\""))
                    continue;
                /* epoch_second in the source, millis in the index (a date field) */
                long ts = Long.parseLong(TaxisCases.number(line, TaxisCases.field(line, "@timestamp"))) * 1000L;
                tsP.setLongValue(ts);
                tsD.setLongValue(ts);
                w.addDocument(doc);
                n++;
            }
            w.forceMerge(1);
        }
        System.err.printf("lucene: indexed %d logs docs + force-merged in %.1f s%n", n,
                          (System.nanoTime() - t0) / 1e9);
    }

    static IndexWriterConfig wcfg() {
        IndexWriterConfig c = new IndexWriterConfig();
        c.setRAMBufferSizeMB(256);
        c.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
        return c;
    }
}
