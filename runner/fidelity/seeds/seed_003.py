"""Seed 003 (GPU vs CPU performance, CIFAR-10 and hate-speech text) describes its fine-tuning but prints no
loop; this is the plain Hugging Face fine-tuning step such a project writes: BERT-base for sequence
classification (random weights from its config, sequence length 128), the batch moved from host memory to the
device every step, fp32, torch.optim.AdamW(lr=5e-5), loss.backward(), step, zero_grad. `--steps` steps after
a warm-up step. Imports nothing from benchsite. Prints one JSON line: seconds per step."""

import argparse
import json
import time

import torch
import transformers

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu")
parser.add_argument("--steps", type=int, default=5)
parser.add_argument("--batch", type=int, default=8)
args = parser.parse_args()
device = torch.device(args.device)

config = transformers.BertConfig(
    hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072, num_labels=2
)
model = transformers.BertForSequenceClassification(config).to(device)
model.train()
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)

batch = {
    "input_ids": torch.randint(0, config.vocab_size, (args.batch, 128)),
    "attention_mask": torch.ones(args.batch, 128, dtype=torch.long),
    "labels": torch.randint(0, 2, (args.batch,)),
}


def sync():
    if device.type == "cuda":
        torch.cuda.synchronize()


def steps(n):
    for _ in range(n):
        inputs = {k: v.to(device) for k, v in batch.items()}
        outputs = model(**inputs)
        loss = outputs.loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


steps(1)  # warm-up (benchsite records it apart)
sync()
start = time.perf_counter()
steps(args.steps)
sync()
seconds = time.perf_counter() - start
print(json.dumps({"per_unit_s": seconds / args.steps, "units": args.steps}))
