"""Run one PI0.5 inference: ``python run_pi05.py CHECKPOINT_DIR [PROMPT]``."""

import sys

from apxinf import AutoPolicy


def main() -> None:
    policy = AutoPolicy.from_pretrained(sys.argv[1], num_steps=4)
    prompt = sys.argv[2] if len(sys.argv) > 2 else "pick up the red cube"
    logits = policy.infer({"prompt": prompt})
    print(f"{len(logits)} logits, first: {logits[:4]}")


if __name__ == "__main__":
    main()
