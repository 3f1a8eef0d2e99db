// Lucene 8.7 side of bench/geo_bench.c: the same N points (same generator: 80% in a New York
// box, 20% anywhere), indexed as LatLonPoint + LatLonDocValuesField and force merged to one
// segment; then single-threaded, best of R runs: IndexSearcher.count of LatLonPoint box and
// distance queries (the points tree) and of LatLonDocValuesField's slow box / distance queries
// (a doc-values scan). Prints matches and milliseconds per case, in geo_bench's order.
// Build/run: javac -cp /usr/share/java/lucene-core-8.7.0.jar -d build/lucene-bench \
//   bench/LuceneGeoBench.java && java -Xmx3g -cp build/lucene-bench:/usr/share/java/lucene-core-8.7.0.jar \
//   LuceneGeoBench 2000000 5
import java.nio.file.Files;
import java.nio.file.Path;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.LatLonDocValuesField;
import org.apache.lucene.document.LatLonPoint;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.store.FSDirectory;

public class LuceneGeoBench {
    static long x = 88172645463325252L;

    static double unit() {
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        return (double) (x >>> 11) / 9007199254740992.0;
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 2000000;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        Path dir = Files.createTempDirectory("lucene_geo_bench");
        long t0 = System.nanoTime();
        try (FSDirectory d = FSDirectory.open(dir)) {
            IndexWriterConfig cfg = new IndexWriterConfig();
            cfg.setRAMBufferSizeMB(256);
            try (IndexWriter w = new IndexWriter(d, cfg)) {
                for (int i = 0; i < n; i++) {
                    double lat, lon;
                    if (unit() < 0.8) {
                        lat = 40.5 + 0.5 * unit();
                        lon = -74.3 + 0.6 * unit();
                    } else {
                        lat = -90 + 180 * unit();
                        lon = -180 + 360 * unit();
                    }
                    Document doc = new Document();
                    doc.add(new LatLonPoint("g", lat, lon));
                    doc.add(new LatLonDocValuesField("g", lat, lon));
                    w.addDocument(doc);
                }
                w.forceMerge(1);
            }
            System.out.printf("indexed %d docs in %.0f ms%n", n, (System.nanoTime() - t0) / 1e6);
            try (DirectoryReader r = DirectoryReader.open(d)) {
                IndexSearcher s = new IndexSearcher(r);
                s.setQueryCache(null);
                String[] names = {"box midtown", "box nyc", "box dateline", "box europe",
                                  "dist 1km", "dist 20km", "dist 2000km"};
                Query[] pts = {
                    LatLonPoint.newBoxQuery("g", 40.70, 40.80, -74.02, -73.93),
                    LatLonPoint.newBoxQuery("g", 40.5, 41.0, -74.3, -73.7),
                    LatLonPoint.newBoxQuery("g", -30, 30, 170, -170),
                    LatLonPoint.newBoxQuery("g", 35, 60, -10, 30),
                    LatLonPoint.newDistanceQuery("g", 40.75, -73.98, 1000),
                    LatLonPoint.newDistanceQuery("g", 40.75, -73.98, 20000),
                    LatLonPoint.newDistanceQuery("g", 48.85, 2.35, 2000000)};
                Query[] dvs = {
                    LatLonDocValuesField.newSlowBoxQuery("g", 40.70, 40.80, -74.02, -73.93),
                    LatLonDocValuesField.newSlowBoxQuery("g", 40.5, 41.0, -74.3, -73.7),
                    LatLonDocValuesField.newSlowBoxQuery("g", -30, 30, 170, -170),
                    LatLonDocValuesField.newSlowBoxQuery("g", 35, 60, -10, 30),
                    LatLonDocValuesField.newSlowDistanceQuery("g", 40.75, -73.98, 1000),
                    LatLonDocValuesField.newSlowDistanceQuery("g", 40.75, -73.98, 20000),
                    LatLonDocValuesField.newSlowDistanceQuery("g", 48.85, 2.35, 2000000)};
                // warm up the JIT on every case first
                for (int k = 0; k < 20; k++)
                    for (int c = 0; c < names.length; c++) {
                        s.count(pts[c]);
                        if (k < 3)
                            s.count(dvs[c]);
                    }
                System.out.printf("%-14s %10s %12s %12s%n", "query", "matches", "points_ms",
                                  "dv_scan_ms");
                for (int c = 0; c < names.length; c++) {
                    double[] best = {1e30, 1e30};
                    int[] cnt = new int[2];
                    for (int k = 0; k < runs; k++) {
                        for (int m = 0; m < 2; m++) {
                            long t = System.nanoTime();
                            cnt[m] = s.count(m == 0 ? pts[c] : dvs[c]);
                            double ms = (System.nanoTime() - t) / 1e6;
                            best[m] = Math.min(best[m], ms);
                        }
                    }
                    System.out.printf("%-14s %10d %12.2f %12.2f%s%n", names[c], cnt[0], best[0],
                                      best[1], cnt[0] == cnt[1] ? "" : " (dv count " + cnt[1] + ")");
                }
            }
        } finally {
            for (Path p : Files.list(dir).toArray(Path[]::new))
                Files.delete(p);
            Files.delete(dir);
        }
    }
}
