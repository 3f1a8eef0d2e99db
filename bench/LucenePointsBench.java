// Lucene 8.7 side of bench/range_bench.c: the same N values (same generator: taxis-like
// total_amount doubles, one per doc), indexed as DoublePoint + DoubleDocValuesField and force
// merged to one segment, then single-threaded, best of R runs: IndexSearcher.count of
// DoublePoint range queries [5,15), [50,50.5), [1,119), and match_all sorted by the field
// (top 10 asc, top 1000 desc, with setCanUsePoints so Lucene may skip by points, and with
// totals not tracked). Prints milliseconds per case.
// Build/run: javac -cp /usr/share/java/lucene-core-8.7.0.jar -d build/lucene-bench \
//   bench/LucenePointsBench.java && java -Xmx3g -cp build/lucene-bench:/usr/share/java/lucene-core-8.7.0.jar \
//   LucenePointsBench 5000000 5
import java.nio.file.Files;
import java.nio.file.Path;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.DoubleDocValuesField;
import org.apache.lucene.document.DoublePoint;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TopFieldCollector;
import org.apache.lucene.store.FSDirectory;

public class LucenePointsBench {
    public static void main(String[] args) throws Exception {
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
