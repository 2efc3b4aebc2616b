#!/usr/bin/env python3
"""Reference vectors for graft's Hugging Face tokenizer (data/hf_tokenizer.h), recorded by
running the `tokenizers` package.

Trains small byte-level BPE tokenizers with `tokenizers` on the fortunes corpus
(/usr/share/games/fortunes, Debian's `fortunes` package) and writes into tests/data/testdata/hf/:

  llama3_style.json   Llama-3-style: a Sequence of Split(Llama 3's regex, Isolated) and
                      ByteLevel(add_prefix_space=False, use_regex=False), ignore_merges, a
                      vocabulary of 1000 (744 merges) plus two entries no merge reaches
                      (" zqxj", "zqxj": only ignore_merges gives them), then special tokens
                      added after it as Llama 3 has them (<|begin_of_text|>, <|end_of_text|>,
                      ...); merges as ["a", "b"] pairs.
  gpt2_style.json     GPT-2-style: ByteLevel(add_prefix_space=False) with its built-in regex,
                      <|endoftext|> trained into the vocabulary, 600 ids (343 merges); merges
                      rewritten to the older "a b" string form (and reloaded by tokenizers
                      from that form before anything is recorded).
  flags.json          gpt2_style plus added tokens exercising lstrip / rstrip / single_word /
                      normalized and a special single_word token, and a ByteLevel pre-tokenizer
                      with add_prefix_space=True.
  <name>.vectors.json {"meta": {...versions...}, "eot": ..., "eot_id": ..., "vocab_size": ...,
                       "cases": [{"text": str, "ids": [...], "ids_text": [...], "decoded": str}]}
      ids       tok.encode(text, add_special_tokens=False).ids (special tokens in the text are
                parsed: graft's encode_special)
      ids_text  the same with tok.encode_special_tokens = True (special tokens stay text:
                graft's encode)
      decoded   tok.decode(ids, skip_special_tokens=False)
      The texts: fortunes (every 97th, at most 400 characters), hand-written cases (accents,
      CJK, emoji with joiners and modifiers, combining marks, digits of other scripts, runs of
      spaces / tabs / newlines, trailing spaces, contractions in both cases, U+017F (long s,
      which the training text also holds), special tokens inside text, Unicode whitespace)
      and random strings drawn from a pool that mixes those classes (seeded).
  split_patterns.vectors.json
      {"cases": [{"text": str, "gpt2": [...], "llama3": [...]}]}: the byte lengths of the
      pieces tokenizers' Split(Regex(pattern), "isolated") cuts the text into, for GPT-2's and
      Llama 3's patterns (the same texts, more random ones, and digit runs / newlines).

Usage: pip install tokenizers==0.23.3; python3 tools/make_hf_tokenizer_vectors.py
(a few seconds). The tests read only the files written here; they never run Python.
"""
import json
import os
import random

import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

FORTUNES = "/usr/share/games/fortunes"
OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "testdata", "hf")
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
GPT2_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3_SPECIAL = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                  "<|end_header_id|>", "<|eot_id|>"]


def fortunes():
  docs = []
  for name in sorted(os.listdir(FORTUNES)):
    path = os.path.join(FORTUNES, name)
    if "." in name or os.path.islink(path) or not os.path.isfile(path):
      continue
    with open(path, encoding="utf-8", errors="replace") as f:
      text = f.read()
    for rec in text.split("\n%\n"):
      rec = rec.strip("\n")
      if rec and "\b" not in rec:
        docs.append(rec)
  return docs


HAND_WRITTEN = [
    "Hello world", "hello, world!", "  leading spaces", "trailing spaces   ", "a   b",
    "tabs\tand\t\tmore\ttabs", "line one\nline two\n\n\nline five\n", "crlf\r\nline\r\n",
    "mixed \t \n  \r\n whitespace", " ", "  ", "\n", "\t", "\n\n", " \n ", "x\n b", "end  ",
    "don't stop", "I'M HERE", "we'LL see", "it's", "'s", "'S'T'RE'VE'M'LL'D", "you'd've",
    "'ſ and 'ſt", "beſt 'ſtory'", "'ſtory", "thou'ſt", "rock'n'roll", "O'Neil's", "ain't",
    "'twas", "''", "' s", "zqxj and zqxj, not zqxjs",
    "café naïve résumé façade", "Ångström Øre Ærø", "e\u0301 (e + combining acute)",
    "A\u030a vs \u00c5", "Zalgo: Z\u0351\u0364a\u0352\u0363l\u0310g\u0307o", "ñandú",
    "日本語のテキストです。", "中文测试，标点！", "한국어 텍스트", "ไทย ภาษา",
    "Emoji 👍🏽 and family 👨‍👩‍👧 and flag 🇩🇪", "🙂🙂🙂", "❤️ and ✔︎",
    "Arabic digits ١٢٣٤٥ and ٦٧٨", "Devanagari ०१२३४५", "fullwidth １２３ ｘｙｚ",
    "Roman Ⅻ and ½ ² ³ and 𝟘𝟙𝟚", "numbers 1234567 3.14159 -42 1,000,000",
    "12 123 1234 12345", "x1y22z333", "Ελληνικά κείμενο", "русский текст, ещё",
    "עברית וערבית العربية", "non-breaking\u00a0space", "ideographic\u3000space",
    "thin\u2009space and line\u2028sep", "zero\u200bwidth\u200djoiner", "NEL\u0085here",
    "hello<|end_of_text|>world", "<|begin_of_text|>The start", "a <|eot_id|> b",
    "<|end_of_text|><|end_of_text|>", "partial <|end_of_tex and <|", "<|endoftext|> gpt",
    "x<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
    "<mask> and  <mask>  spaced", "foo food foo_bar (foo) xfoo foo", "New York, New York!",
    "x<sw>y and <sw> alone", "special<|endoftext|>inside",
    "punctuation!!! ??? ... --- ***", "email@example.com https://x.y/z?q=1&r=2",
    "C++ code: for (int i = 0; i < n; ++i) { x[i] = 0; }", "#include <vector>",
    "    indented code\n        more", "'quoted' \"double\" `back`",
]

POOL = (list("abcdefghijklmnopqrstuvwxyzABCXYZ") + list("0123456789") + list(" " * 8) +
        list("\t\n\r") + list(".,;:!?'\"-()[]{}<>|/@#$%^&*_+=~`") + list("éüñçÅßøœ") +
        list("日本語中文한국") + ["👍", "🏽", "\u200d", "\u0301", "\u00a0", "\u3000", "١", "५",
                                "Ⅻ", "½", "ſ", "'s", "'T", "'ll", "<|end_of_text|>",
                                "<|begin_of_text|>", "<mask>", "foo", "   ", "\n\n"])


# Digit runs and newlines before letters, where the two patterns' rules differ most.
DIGITS_AND_LINES = ["1", "12", "123", "1234", "12345", "123456", "1234567", "x1234y",
                    " 1234 ", "١٢٣٤٥", "12३४", "\nHello", "\r\nHi", "\n\nA", "\n \nB",
                    ".\nC", "!!\n\nD", " \n", "a\n", "\tA", "  \tB", "\u00a0C", "\u3000D"]


def random_texts(n, seed):
  rng = random.Random(seed)
  return ["".join(rng.choice(POOL) for _ in range(rng.randint(1, 60))) for _ in range(n)]


# Old-style long s, so that the vocabulary learns "ſt" and the case-insensitive contraction
# "'ſ" (which Oniguruma's case folding matches as 's) changes the ids of "'ſt".
LONG_S = ["Of the beſt, the moſt, the firſt and the laſt ſtory."] * 300


UNMERGED = ["\u0120zqxj", "zqxj"]  # byte-level strings: " zqxj", "zqxj"


def train_llama3_style(docs):
  tok = Tokenizer(models.BPE(ignore_merges=True))
  tok.pre_tokenizer = pre_tokenizers.Sequence([
      pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
      pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
  ])
  tok.decoder = decoders.ByteLevel()
  trainer = trainers.BpeTrainer(vocab_size=1000, show_progress=False,
                                initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
  tok.train_from_iterator(docs + LONG_S, trainer)
  # Two vocabulary entries that no merge reaches, as real vocabularies have (Llama 3's came
  # from tiktoken): only ignore_merges encodes the piece " zqxj" / "zqxj" as one token.
  j = json.loads(tok.to_str())
  for word in UNMERGED:
    j["model"]["vocab"][word] = len(j["model"]["vocab"])
  tok = Tokenizer.from_str(json.dumps(j))
  tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in LLAMA3_SPECIAL])
  return tok


def train_gpt2_style(docs):
  tok = Tokenizer(models.BPE())
  tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
  tok.decoder = decoders.ByteLevel()
  trainer = trainers.BpeTrainer(vocab_size=600, show_progress=False,
                                special_tokens=["<|endoftext|>"],
                                initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
  tok.train_from_iterator(docs, trainer)
  # The older merges form: "a b" strings. Reloaded, so the vectors come from this very file.
  j = json.loads(tok.to_str())
  j["model"]["merges"] = [a + " " + b for a, b in j["model"]["merges"]]
  text = json.dumps(j, ensure_ascii=False, separators=(",", ":"))
  return Tokenizer.from_str(text), text


def flags_variant(gpt2):
  tok = Tokenizer.from_str(gpt2.to_str())
  tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
  tok.add_tokens([
      AddedToken("<mask>", lstrip=True, rstrip=True, normalized=False, special=False),
      AddedToken("foo", single_word=True, normalized=True, special=False),
      AddedToken("New York", normalized=True, special=False),
  ])
  tok.add_special_tokens([AddedToken("<sw>", single_word=True, special=True, normalized=False)])
  return tok


def record(tok, texts, name, eot, json_text=None):
  def encode(text, as_text):
    tok.encode_special_tokens = as_text
    return tok.encode(text, add_special_tokens=False).ids
  cases = []
  for t in texts:
    ids = encode(t, False)
    cases.append({"text": t, "ids": ids, "ids_text": encode(t, True),
                  "decoded": tok.decode(ids, skip_special_tokens=False)})
  tok.encode_special_tokens = False
  json_path = os.path.join(OUT, name + ".json")
  with open(json_path, "w", encoding="utf-8") as f:
    f.write(json_text if json_text is not None else tok.to_str(pretty=False))
  # Loading the written file again must give the same ids (it is what graft reads).
  again = Tokenizer.from_file(json_path)
  for c in cases[:20]:
    assert again.encode(c["text"], add_special_tokens=False).ids == c["ids"], c["text"]
  meta = {"generator": "tools/make_hf_tokenizer_vectors.py", "tokenizers": tokenizers.__version__,
          "tokenizer": name + ".json"}
  vectors = {"meta": meta, "eot": eot, "eot_id": tok.token_to_id(eot),
             "vocab_size": tok.get_vocab_size(with_added_tokens=True), "cases": cases}
  with open(os.path.join(OUT, name + ".vectors.json"), "w", encoding="utf-8") as f:
    json.dump(vectors, f, ensure_ascii=False, separators=(",", ":"))
    f.write("\n")
  print(f"{name}: {len(cases)} cases, vocab {vectors['vocab_size']}, eot {eot} = "
        f"{vectors['eot_id']}")


def record_splits(texts):
  """Byte lengths of the pieces that tokenizers' Split(regex, Isolated) cuts each text into."""
  splitters = {"gpt2": pre_tokenizers.Split(Regex(GPT2_REGEX), behavior="isolated"),
               "llama3": pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated")}
  cases = []
  for t in texts:
    case = {"text": t}
    for name, split in splitters.items():
      pieces = [t[a:b] for _, (a, b) in split.pre_tokenize_str(t)]
      assert "".join(pieces) == t, t
      case[name] = [len(p.encode("utf-8")) for p in pieces]
    cases.append(case)
  meta = {"generator": "tools/make_hf_tokenizer_vectors.py", "tokenizers": tokenizers.__version__}
  with open(os.path.join(OUT, "split_patterns.vectors.json"), "w", encoding="utf-8") as f:
    json.dump({"meta": meta, "cases": cases}, f, ensure_ascii=False, separators=(",", ":"))
    f.write("\n")
  print(f"split_patterns: {len(cases)} cases")


def main():
  os.makedirs(OUT, exist_ok=True)
  docs = fortunes()
  sample = [d for d in docs[::97] if len(d) <= 400][:120]
  llama3 = train_llama3_style(docs)
  record(llama3, sample + HAND_WRITTEN + random_texts(80, 1), "llama3_style", "<|end_of_text|>")
  gpt2, gpt2_text = train_gpt2_style(docs)
  record(gpt2, sample[:40] + HAND_WRITTEN + random_texts(40, 2), "gpt2_style", "<|endoftext|>",
         gpt2_text)
  record(flags_variant(gpt2), HAND_WRITTEN + random_texts(60, 3), "flags", "<|endoftext|>")
  record_splits(sample[:20] + HAND_WRITTEN + random_texts(250, 4) + DIGITS_AND_LINES)


if __name__ == "__main__":
  main()
