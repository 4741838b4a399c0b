"""
An optional learned reward for the no-tool branch (--reward_model_path): a transformers sequence classifier
with one logit. The design's reward works without it; read this when you bring one.
"""
import torch


class RewardModel:
    """An optional transformers reward model (sequence classification, one logit) for the no-tool branch:
    it scores the user's question with the model's final answer."""

    def __init__(self, path: str, device: str = "cpu", max_length: int = 1024, clip: float = 3.0):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForSequenceClassification.from_pretrained(path, dtype=torch.float32).to(device)
        self.model.eval().requires_grad_(False)
        if self.model.config.num_labels != 1:
            raise ValueError(f"{path}: a reward model needs num_labels=1, got {self.model.config.num_labels}")
        self.device, self.max_length, self.clip = device, max_length, clip

    @torch.no_grad()
    def score(self, messages, answer: str) -> float:
        question = next((m.get("content") or "" for m in reversed(messages) if m["role"] == "user"), "")
        chat = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        if self.tokenizer.chat_template:
            text = self.tokenizer.apply_chat_template(chat, tokenize=False)
        else:
            text = f"user: {question}\nassistant: {answer}"
        enc = self.tokenizer(text, truncation=True, max_length=self.max_length, return_tensors="pt")
        logit = self.model(**{k: v.to(self.device) for k, v in enc.items()}).logits[0, 0].item()
        return max(-self.clip, min(self.clip, logit))
