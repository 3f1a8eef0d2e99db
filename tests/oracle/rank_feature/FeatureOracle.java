// Lucene 8.7 oracle for the rank_feature query (tests/e2e/test_rank_feature.py): indexes the
// documents' features with Lucene's FeatureField as Elasticsearch does (a rank_feature field
// f is feature f of field "_feature", its value inverted when positive_score_impact is false; a
// rank_features field f holds feature k as feature k of field f) and prints every hit's score
// of each query, built with FeatureField's query factories and a BoostQuery for the boost.
//   docs.tsv:    doc <TAB> field <TAB> feature <TAB> value (already inverted when needed)
//   queries.tsv: qid <TAB> field <TAB> feature <TAB> function <TAB> p1 <TAB> p2 <TAB> boost
//                (function: saturation (p1 = pivot, "-" for the default), log (p1 = scaling
//                factor), sigmoid (p1 = pivot, p2 = exponent), linear)
//   output:      qid <TAB> doc <TAB> score (Float.toString)
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.search.*;
import org.apache.lucene.store.*;

public class FeatureOracle {
    public static void main(String[] args) throws Exception {
        Map<String, Document> docs = new TreeMap<>();
        for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            String[] c = line.split("\t");
            Document d = docs.computeIfAbsent(c[0], k -> {
                Document x = new Document();
                x.add(new StringField("id", k, Field.Store.YES));
                return x;
            });
            d.add(new FeatureField(c[1], c[2], Float.parseFloat(c[3])));
        }
        Directory dir = new ByteBuffersDirectory();
        try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
            for (Document d : docs.values()) w.addDocument(d);
            w.forceMerge(1);
        }
        IndexSearcher s = new IndexSearcher(DirectoryReader.open(dir));
        StringBuilder out = new StringBuilder();
        for (String line : Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8)) {
            String[] c = line.split("\t");
            String field = c[1], feature = c[2], fn = c[3];
            Query q;
            if (fn.equals("saturation"))
                q = c[4].equals("-") ? FeatureField.newSaturationQuery(field, feature)
                                     : FeatureField.newSaturationQuery(field, feature, 1f,
                                               Float.parseFloat(c[4]));
            else if (fn.equals("log"))
                q = FeatureField.newLogQuery(field, feature, 1f, Float.parseFloat(c[4]));
            else if (fn.equals("sigmoid"))
                q = FeatureField.newSigmoidQuery(field, feature, 1f, Float.parseFloat(c[4]),
                                                 Float.parseFloat(c[5]));
            else
                q = FeatureField.newLinearQuery(field, feature, 1f);
            float boost = Float.parseFloat(c[6]);
            if (boost != 1f) q = new BoostQuery(q, boost);
            for (ScoreDoc sd : s.search(q, docs.size() + 1).scoreDocs)
                out.append(c[0]).append('\t').append(s.doc(sd.doc).get("id")).append('\t')
                   .append(Float.toString(sd.score)).append('\n');
        }
        System.out.print(out);
    }
}
