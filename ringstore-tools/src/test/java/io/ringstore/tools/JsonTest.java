package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The JSON writer writes each token as it goes (no document held whole), in the exact bytes the CLI has always printed. */
class JsonTest {
    @Test
    void writesTokensAsTheyComeWithTheUsualNumberAndStringForms() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        Json j = new Json(out).begin().field("a", 1).field("b", 0.1).field("nan", Double.NaN);
        out.flush();
        assertEquals(
                "{\"a\":1,\"b\":0.1,\"nan\":null",
                bytes.toString(StandardCharsets.UTF_8),
                "written before the document ends");
        j.field("s", "q\"\\\n\r\t\u0001é")
                .beginArray("l")
                .value("x")
                .value("y")
                .endArray()
                .beginObject("o")
                .end()
                .end();
        out.flush();
        assertEquals(
                "{\"a\":1,\"b\":0.1,\"nan\":null,\"s\":\"q\\\"\\\\\\n\\r\\t\\u0001é\",\"l\":[\"x\",\"y\"],\"o\":{}}",
                bytes.toString(StandardCharsets.UTF_8));
    }
}
