package io.ringstore.tools.analysis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

class CvChartTest {
    private static List<Sweep.Row> rows() {
        List<Sweep.Row> rows = new ArrayList<>();
        for (int k : new int[] {10, 100, 1000, 10_000}) {
            double p = LoadFormula.cv(500, k);
            long n = 500L * k;
            rows.add(new Sweep.Row(
                    k,
                    500,
                    3,
                    n,
                    p,
                    p,
                    p,
                    p * 0.97,
                    p * 1.03,
                    1.2,
                    0.8,
                    k == 10 ? 0 : n * (double) n / 8589934592.0,
                    CollisionModel.birthdayEstimate(n),
                    0,
                    0));
        }
        return rows;
    }

    static Document parse(String svg) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        return f.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    }

    static List<String> texts(Document doc) {
        NodeList nodes = doc.getElementsByTagNameNS("http://www.w3.org/2000/svg", "text");
        List<String> out = new ArrayList<>();
        for (int i = 0; i < nodes.getLength(); i++) {
            out.add(nodes.item(i).getTextContent());
        }
        return out;
    }

    @Test
    void isWellFormedSvgWithAxesLabelsAndLegend() throws Exception {
        Document doc = parse(CvChart.render(rows(), CollisionModel.LINE_32, "N = 500, test"));
        Element root = doc.getDocumentElement();
        assertEquals("svg", root.getLocalName());
        List<String> texts = texts(doc);
        for (String expected : List.of(
                "points per backend k (log scale)",
                "colliding points per ring",
                "10",
                "100",
                "1,000",
                "10,000",
                "1 %",
                "10 %",
                "N = 500, test")) {
            assertTrue(texts.contains(expected), "text '" + expected + "' in " + texts);
        }
        assertTrue(texts.stream().anyMatch(t -> t.startsWith("formula")), "legend: formula");
        assertTrue(texts.stream().anyMatch(t -> t.startsWith("32-bit model")), "legend: model");
        assertTrue(texts.stream().anyMatch(t -> t.startsWith("simulated, 3 seeds")), "legend: simulation");
        assertTrue(texts.stream().anyMatch(t -> t.startsWith("birthday estimate")), "legend: birthday");
        assertTrue(texts.stream().anyMatch(t -> t.startsWith("no collision")), "legend: the k = 10 row had none");
        assertEquals(
                4 + 1,
                doc.getElementsByTagNameNS("http://www.w3.org/2000/svg", "circle")
                        .getLength(),
                "a marker per simulated row, one in the legend");
        assertEquals(
                3,
                doc.getElementsByTagNameNS("http://www.w3.org/2000/svg", "polyline")
                        .getLength(),
                "formula, model, birthday");
    }

    @Test
    void everyCoordinateIsInsideTheCanvas() throws Exception {
        String svg = CvChart.render(rows(), CollisionModel.LINE_32, "x");
        Document doc = parse(svg);
        double width = Double.parseDouble(doc.getDocumentElement().getAttribute("width"));
        double height = Double.parseDouble(doc.getDocumentElement().getAttribute("height"));
        NodeList circles = doc.getElementsByTagNameNS("http://www.w3.org/2000/svg", "circle");
        for (int i = 0; i < circles.getLength(); i++) {
            Element c = (Element) circles.item(i);
            double x = Double.parseDouble(c.getAttribute("cx"));
            double y = Double.parseDouble(c.getAttribute("cy"));
            assertTrue(x >= 0 && x <= width && y >= 0 && y <= height, "circle at " + x + "," + y);
        }
        NodeList lines = doc.getElementsByTagNameNS("http://www.w3.org/2000/svg", "polyline");
        for (int i = 0; i < lines.getLength(); i++) {
            for (String pair : ((Element) lines.item(i)).getAttribute("points").split(" ")) {
                String[] xy = pair.split(",");
                double x = Double.parseDouble(xy[0]);
                double y = Double.parseDouble(xy[1]);
                assertTrue(x >= 0 && x <= width && y >= 0 && y <= height, "polyline point " + pair);
            }
        }
        assertTrue(!svg.contains("NaN") && !svg.contains("Infinity"), "no NaN or Infinity in the drawing");
    }
}
