// Geo oracle, Lucene 8.7 side (see scripts/test.d/35-geo-oracle.sh): indexes DIR/points.tsv
// (doc lat lon, a doc's points on consecutive lines) as LatLonPoint fields and prints, for
// every line of DIR/queries.tsv, IndexSearcher.count of LatLonPoint.newBoxQuery (box top
// bottom left right) or LatLonPoint.newDistanceQuery (dist lat lon meters), one per line.
import java.io.BufferedReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.LatLonPoint;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.store.ByteBuffersDirectory;

public class GeoOracle {
    public static void main(String[] args) throws Exception {
        Path dir = Paths.get(args[0]);
        ByteBuffersDirectory d = new ByteBuffersDirectory();
        try (IndexWriter w = new IndexWriter(d, new IndexWriterConfig());
             BufferedReader r = Files.newBufferedReader(dir.resolve("points.tsv"))) {
            Document doc = null;
            String prev = null;
            for (String line; (line = r.readLine()) != null;) {
                String[] f = line.split("\t");
                if (!f[0].equals(prev)) {
                    if (doc != null)
                        w.addDocument(doc);
                    doc = new Document();
                    prev = f[0];
                }
                doc.add(new LatLonPoint("g", Double.parseDouble(f[1]), Double.parseDouble(f[2])));
            }
            if (doc != null)
                w.addDocument(doc);
        }
        try (DirectoryReader reader = DirectoryReader.open(d);
             BufferedReader r = Files.newBufferedReader(dir.resolve("queries.tsv"))) {
            IndexSearcher s = new IndexSearcher(reader);
            StringBuilder out = new StringBuilder();
            for (String line; (line = r.readLine()) != null;) {
                String[] f = line.split("\t");
                Query q;
                if (f[0].equals("box"))
                    q = LatLonPoint.newBoxQuery("g", Double.parseDouble(f[2]), Double.parseDouble(f[1]),
                                                Double.parseDouble(f[3]), Double.parseDouble(f[4]));
                else
                    q = LatLonPoint.newDistanceQuery("g", Double.parseDouble(f[1]),
                                                     Double.parseDouble(f[2]), Double.parseDouble(f[3]));
                out.append(s.count(q)).append('\n');
            }
            System.out.print(out);
        }
    }
}
