// Lucene 8.7 side of bench/range_bench.c: the same N values (same generator: taxis-like
// total_amount doubles, one per doc), indexed as DoublePoint + DoubleDocValuesField and force
// merged to one segment, then single-threaded, best of R runs: IndexSearcher.count of
// DoublePoint range queries [5,15), [50,50.5), [1,119), and match_all sorted by the field
// (top 10 asc, top 1000 desc, with setCanUsePoints so Lucene may skip by points, and with
// totals not tracked). Prints milliseconds per case.
// Build/run: javac -cp /usr/share/java/lucene-core-8.7.0.jar -d build/lucene-bench \
//   bench/LucenePointsBench.java && java -Xmx3g -cp build/lucene-bench:/usr/share/java/lucene-core-8.7.0.jar \
//   LucenePointsBench 5000000 5
// Taxis mode (bench/taxis_bench.sh): `LucenePointsBench taxis FILE.ndjson INDEX_DIR RUNS` indexes
// the `scry gen taxis` documents (as Elasticsearch maps them: scaled_float total_amount as a
// LongPoint of round(v * 100), dates as LongPoint epoch millis, passenger_count as IntPoint, each
// with NumericDocValues), force-merged to one segment and kept in INDEX_DIR for the next run,
// then times the operations of bench/taxis_bench.sh (see TaxisCases) single-threaded: JIT warm-up,
// then RUNS timed runs each. Prints TSV: case, hits, median_ms, best_ms.
import java.nio.file.Files;
import java.nio.file.Path;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.IntPoint;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.DoubleDocValuesField;
import org.apache.lucene.document.DoublePoint;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.search.ConstantScoreQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TopFieldCollector;
import org.apache.lucene.search.TopScoreDocCollector;
import org.apache.lucene.store.FSDirectory;

public class LucenePointsBench {
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("taxis")) {
            TaxisCases.run(args[1], Path.of(args[2]), Integer.parseInt(args[3]));
            return;
        }
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 5000000;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        Path dir = Files.createTempDirectory("lucene_points_bench");
        long t0 = System.nanoTime();
        try (FSDirectory d = FSDirectory.open(dir)) {
            IndexWriterConfig cfg = new IndexWriterConfig();
            cfg.setRAMBufferSizeMB(256);
            try (IndexWriter w = new IndexWriter(d, cfg)) {
                long x = 88172645463325252L;
                Document doc = new Document();
                DoublePoint p = new DoublePoint("total_amount", 0);
                DoubleDocValuesField dv = new DoubleDocValuesField("total_amount", 0);
                doc.add(p);
                doc.add(dv);
                for (int i = 0; i < n; i++) {
                    x ^= x << 13;
                    x ^= x >>> 7;
                    x ^= x << 17;
                    double amt = (double) Long.remainderUnsigned(x, 12000) / 100.0;
                    if (Long.remainderUnsigned(x, 4) != 0)
                        amt = 5.0 + (double) Long.remainderUnsigned(x >>> 20, 2500) / 100.0;
                    p.setDoubleValue(amt);
                    dv.setDoubleValue(amt);
                    w.addDocument(doc);
                }
                w.forceMerge(1);
            }
            System.out.printf("lucene index + force merge: %d docs in %.0f ms%n", n,
                              (System.nanoTime() - t0) / 1e6);
            try (DirectoryReader r = DirectoryReader.open(d)) {
                IndexSearcher s = new IndexSearcher(r);
                s.setQueryCache(null);
                double[][] ranges = {{5, 15}, {50, 50.5}, {1, 119}};
                System.out.printf("%-14s %12s %12s%n", "range", "matches", "count_ms");
                for (double[] rg : ranges) {
                    Query q = DoublePoint.newRangeQuery("total_amount", rg[0], Math.nextDown(rg[1]));
                    double best = 1e30;
                    int c = 0;
                    for (int k = 0; k < runs + 2; k++) { // two warm-up runs
                        long a = System.nanoTime();
                        c = s.count(q);
                        double ms = (System.nanoTime() - a) / 1e6;
                        if (k >= 2)
                            best = Math.min(best, ms);
                    }
                    System.out.printf("%-14s %12d %12.2f%n", "[" + rg[0] + "," + rg[1] + ")", c, best);
                }
                String[] names = {"asc size 10", "desc size 1000"};
                boolean[] desc = {false, true};
                int[] ks = {10, 1000};
                System.out.printf("%n%-22s %12s%n", "sort (match_all)", "ms");
                for (int qi = 0; qi < 2; qi++) {
                    SortField sf = new SortField("total_amount", SortField.Type.DOUBLE, desc[qi]);
                    sf.setCanUsePoints();
                    Sort sort = new Sort(sf);
                    double best = 1e30;
                    for (int k = 0; k < runs + 2; k++) {
                        long a = System.nanoTime();
                        TopFieldCollector col = TopFieldCollector.create(sort, ks[qi], 1);
                        s.search(new MatchAllDocsQuery(), col);
                        col.topDocs();
                        double ms = (System.nanoTime() - a) / 1e6;
                        if (k >= 2)
                            best = Math.min(best, ms);
                    }
                    System.out.printf("%-22s %12.2f%n", names[qi], best);
                }
            }
        }
        try (var st = Files.walk(dir)) {
            st.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }
}

/* The Lucene side of bench/taxis_bench.sh; the same operations as its scry workload. */
class TaxisCases {
    /* epoch millis of "yyyy-MM-dd HH:mm:ss" (UTC) at s[at..] */
    static long millis(String s, int at) {
        int y = Integer.parseInt(s, at, at + 4, 10), mo = Integer.parseInt(s, at + 5, at + 7, 10);
        int d = Integer.parseInt(s, at + 8, at + 10, 10), h = Integer.parseInt(s, at + 11, at + 13, 10);
        int mi = Integer.parseInt(s, at + 14, at + 16, 10), se = Integer.parseInt(s, at + 17, at + 19, 10);
        long days = java.time.LocalDate.of(y, mo, d).toEpochDay();
        return ((days * 24 + h) * 60 + mi) * 60000L + se * 1000L;
    }

    static int field(String line, String key) {
        int i = line.indexOf("\"" + key + "\":");
        if (i < 0)
            throw new IllegalArgumentException("no " + key + " in " + line);
        return i + key.length() + 3;
    }

    static String number(String line, int at) {
        int e = at;
        while (e < line.length() && "-+.0123456789eE".indexOf(line.charAt(e)) >= 0)
            e++;
        return line.substring(at, e);
    }

    static void index(String file, Path dir) throws Exception {
        long t0 = System.nanoTime();
        IndexWriterConfig cfg = new IndexWriterConfig();
        cfg.setRAMBufferSizeMB(256);
        cfg.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
        int n = 0;
        try (FSDirectory d = FSDirectory.open(dir); IndexWriter w = new IndexWriter(d, cfg);
             java.io.BufferedReader r = Files.newBufferedReader(Path.of(file))) {
            LongPoint amtP = new LongPoint("total_amount", 0), puP = new LongPoint("pickup_datetime", 0),
                      doP = new LongPoint("dropoff_datetime", 0);
            IntPoint paxP = new IntPoint("passenger_count", 0);
            NumericDocValuesField amtD = new NumericDocValuesField("total_amount", 0),
                                  puD = new NumericDocValuesField("pickup_datetime", 0),
                                  doD = new NumericDocValuesField("dropoff_datetime", 0),
                                  paxD = new NumericDocValuesField("passenger_count", 0);
            Document doc = new Document();
            for (org.apache.lucene.index.IndexableField f :
                 new org.apache.lucene.index.IndexableField[] {amtP, puP, doP, paxP, amtD, puD, doD, paxD})
                doc.add(f);
            for (String line; (line = r.readLine()) != null;) {
                if (line.isEmpty() || line.startsWith("{\"index\""))
                    continue;
                long amt = Math.round(Double.parseDouble(number(line, field(line, "total_amount"))) * 100.0);
                long pu = millis(line, field(line, "pickup_datetime") + 1);
                long dr = millis(line, field(line, "dropoff_datetime") + 1);
                int pax = Integer.parseInt(number(line, field(line, "passenger_count")));
                amtP.setLongValue(amt);
                amtD.setLongValue(amt);
                puP.setLongValue(pu);
                puD.setLongValue(pu);
                doP.setLongValue(dr);
                doD.setLongValue(dr);
                paxP.setIntValue(pax);
                paxD.setLongValue(pax);
                w.addDocument(doc);
                n++;
            }
            w.forceMerge(1);
        }
        System.err.printf("lucene: indexed %d taxis docs + force-merged in %.1f s%n", n,
                          (System.nanoTime() - t0) / 1e9);
    }

    interface Op {
        long run() throws Exception; /* returns the hit count it reports */
    }

    static void time(String name, Op op, int runs) throws Exception {
        long hits = 0;
        for (int k = 0; k < 20; k++) /* JIT warm-up */
            hits = op.run();
        double[] ms = new double[runs];
        for (int k = 0; k < runs; k++) {
            long a = System.nanoTime();
            op.run();
            ms[k] = (System.nanoTime() - a) / 1e6;
        }
        java.util.Arrays.sort(ms);
        System.out.printf("%s\t%d\t%.3f\t%.3f%n", name, hits, ms[runs / 2], ms[0]);
    }

    static void run(String file, Path dir, int runs) throws Exception {
        try (FSDirectory d = FSDirectory.open(dir)) {
            if (!DirectoryReader.indexExists(d))
                index(file, dir);
        }
        try (FSDirectory d = FSDirectory.open(dir); DirectoryReader r = DirectoryReader.open(d)) {
            IndexSearcher s = new IndexSearcher(r);
            s.setQueryCache(null);
            System.out.println("case\thits\tmedian_ms\tbest_ms");
            /* range total_amount gte 5 lt 15 on a scaled_float (factor 100), as Elasticsearch
             * turns it into a long range: [ceil(500), floor(nextDown(1500))] */
            Query amt = new ConstantScoreQuery(LongPoint.newRangeQuery("total_amount", 500, 1499));
            /* dropoff_datetime gte 01/01/2015 lte 21/01/2015 (dd/MM/yyyy; lte rounds up to the
             * day's last millisecond) */
            long lo = java.time.LocalDate.of(2015, 1, 1).toEpochDay() * 86400000L;
            long hi = java.time.LocalDate.of(2015, 1, 22).toEpochDay() * 86400000L - 1;
            Query date = new ConstantScoreQuery(LongPoint.newRangeQuery("dropoff_datetime", lo, hi));
            /* exact count (size 0, track_total_hits true), top 10 by score with an exact total
             * (track_total_hits true) and the default request (top 10, totals up to 10,000) */
            time("range_count", () -> s.count(amt), runs);
            time("range_total", () -> top(s, amt, 10, Integer.MAX_VALUE), runs);
            time("range", () -> top(s, amt, 10, 10000), runs);
            time("date_range_count", () -> s.count(date), runs);
            time("date_range_total", () -> top(s, date, 10, Integer.MAX_VALUE), runs);
            time("date_range", () -> top(s, date, 10, 10000), runs);
            time("sort_pickup_desc_1000_total",
                 () -> sorted(s, "pickup_datetime", SortField.Type.LONG, 1000, Integer.MAX_VALUE), runs);
            time("sort_pickup_desc_1000", () -> sorted(s, "pickup_datetime", SortField.Type.LONG, 1000, 10000), runs);
            time("sort_pickup_desc_1000_nototal", () -> sorted(s, "pickup_datetime", SortField.Type.LONG, 1000, 1), runs);
            time("sort_passenger_desc_total",
                 () -> sorted(s, "passenger_count", SortField.Type.INT, 10, Integer.MAX_VALUE), runs);
            time("sort_passenger_desc", () -> sorted(s, "passenger_count", SortField.Type.INT, 10, 10000), runs);
            time("sort_passenger_desc_nototal", () -> sorted(s, "passenger_count", SortField.Type.INT, 10, 1), runs);
        }
    }

    static long top(IndexSearcher s, Query q, int k, int threshold) throws Exception {
        TopScoreDocCollector c = TopScoreDocCollector.create(k, threshold);
        s.search(q, c);
        return c.topDocs().totalHits.value;
    }

    /* match_all sorted desc by a numeric field, size k, totals up to `threshold` (10,000 is
     * Elasticsearch's default), with the points-based skipping Elasticsearch 7.10 enables */
    static long sorted(IndexSearcher s, String field, SortField.Type type, int k, int threshold)
        throws Exception {
        SortField sf = new SortField(field, type, true);
        sf.setCanUsePoints();
        TopFieldCollector c = TopFieldCollector.create(new Sort(sf), k, threshold);
        s.search(new MatchAllDocsQuery(), c);
        return c.topDocs().totalHits.value;
    }
}
