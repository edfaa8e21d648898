"""The encoder-decoder Transformer of "Attention Is All You Need", for sequence-to-sequence tasks.

    src ids -> Embedding * sqrt(d_model) + PE -> nn.TransformerEncoder -> memory
    tgt ids -> Embedding * sqrt(d_model) + PE -> nn.TransformerDecoder(memory) -> Linear -> logits

PyTorch code: `torch`, `nn` and `F` come from models/library.py (minigrad), and models/pytorch.py
runs this same file on PyTorch. Batch first throughout: ids (B, S), hidden states (B, S, d_model).

Masks in the convention of PyTorch's Transformer modules (bool, True = masked out):
    src_key_padding_mask       (B, S)  True at source padding: ignored by the encoder's self-attention
                                       and by every decoder layer's cross-attention
    tgt_key_padding_mask       (B, T)  True at target padding
    tgt_mask                   (T, T)  True above the diagonal: position i may not see later positions
Decoding re-runs the decoder over the whole prefix at every step: PyTorch's decoder layers keep no
cache of keys and values, and this file must run on both libraries.
"""
import contextlib
import math
from dataclasses import dataclass
from functools import partial

from .library import F, PositionalEncoding, nn, torch


@dataclass
class TransformerConfig:
    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 64
    num_heads: int = 4
    d_ff: int = 256
    num_encoder_layers: int = 2
    num_decoder_layers: int = 2
    dropout: float = 0.1
    max_len: int = 256  # the longest sequence the positional encoding (and the causal mask) covers
    norm_first: bool = False  # False: post-norm as in the paper; True: pre-norm, with a final LayerNorm per stack
    activation: str = "relu"  # "relu", "gelu", or "gelu_tanh" (GPT-2's tanh form of GELU)
    tie_embeddings: bool = False  # output projection shares the target embedding's weight
    pad_id: int = 0  # the padding token in both vocabularies: masked out, and its embedding row stays 0


def activation_function(name):
    """What PyTorch's layers take as `activation`: "relu" and "gelu" as they are, "gelu_tanh" as a function."""
    return partial(F.gelu, approximate="tanh") if name == "gelu_tanh" else name


def future_mask(max_len):
    """(max_len, max_len) bool, True above the diagonal: key j lies in query i's future when j > i."""
    return torch.ones(max_len, max_len, dtype=torch.bool).triu(1)


def init_weights(model):
    """Every layer initialised as PyTorch initialises it when it is built, each with draws of its own;
    the embeddings Glorot-uniform, as in the Annotated Transformer.

    PyTorch's layers: Linear weights and biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)); an attention's
    in_proj_weight (W_Q, W_K and W_V stacked) Glorot-uniform as one (3 d, d) matrix, its biases 0.
    nn.TransformerEncoder and nn.TransformerDecoder deep-copy one layer, so their layers start equal:
    each is drawn again here. PyTorch's own N(0, 1) for an embedding would swamp the positional
    encoding once multiplied by sqrt(d_model), hence Glorot there.

    Measured on the copy task, seeds 0-4, warm-up then cosine decay over 1,000 steps: a median of 500
    steps to 100%, against 700 with Glorot on every matrix (W_Q, W_K, W_V as one); with W_Q, W_K and W_V
    each Glorot as a (d, d) matrix, as the models had them, 2 of 5 seeds ended at 99.9% with 800 planned.
    The smaller weights (W_O and the feed-forward layers at 1/sqrt(fan_in) rather than Glorot's
    sqrt(6 / (fan_in + fan_out)), W_Q, W_K and W_V at 1/sqrt(2) of their bound as (d, d) matrices)
    start the attention closer to uniform.
    """
    for module in model.modules():
        if isinstance(module, nn.Linear):
            module.reset_parameters()
    for module in model.modules():  # after out_proj's own reset: its bias 0, as a new attention has it
        if isinstance(module, nn.MultiheadAttention):
            module._reset_parameters()
        elif isinstance(module, nn.Embedding):
            nn.init.xavier_uniform_(module.weight)


class Seq2SeqTransformer(nn.Module):
    def __init__(self, config):
        super().__init__()
        c = self.config = config
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model, padding_idx=c.pad_id)
        self.tgt_embed = nn.Embedding(c.tgt_vocab_size, c.d_model, padding_idx=c.pad_id)
        self.positional = PositionalEncoding(c.d_model, c.max_len, c.dropout)
        layer = dict(d_model=c.d_model, nhead=c.num_heads, dim_feedforward=c.d_ff, dropout=c.dropout,
                     activation=activation_function(c.activation), batch_first=True, norm_first=c.norm_first)
        # a post-norm layer ends in a LayerNorm already; a pre-norm stack needs one after its last layer
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(**layer), c.num_encoder_layers,
                                             norm=nn.LayerNorm(c.d_model) if c.norm_first else None,
                                             enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(**layer), c.num_decoder_layers,
                                             norm=nn.LayerNorm(c.d_model) if c.norm_first else None)
        self.generator = nn.Linear(c.d_model, c.tgt_vocab_size)
        init_weights(self)
        for embed in (self.src_embed, self.tgt_embed):
            embed.weight.data[c.pad_id] = 0
        if c.tie_embeddings:
            self.generator.weight = self.tgt_embed.weight
        self.embed_scale = math.sqrt(c.d_model)  # a Python float: keeps float32 as float32
        # a buffer, so that it moves with model.to(device); not saved: it is a function of max_len
        self.register_buffer("future", future_mask(c.max_len), persistent=False)

    def padding(self, ids):
        """(B, L) bool, True at the pad tokens of ids (B, L): a key padding mask."""
        return ids == self.config.pad_id

    def encode(self, src):
        """src (B, S) ids -> memory (B, S, d_model)."""
        x = self.positional(self.src_embed(src) * self.embed_scale)
        return self.encoder(x, src_key_padding_mask=self.padding(src))

    def decode(self, tgt, memory, src_padding, tgt_padding=None):
        """tgt (B, T) ids -> hidden states (B, T, d_model); each position sees itself and the left of
        tgt (and no padded target position, given tgt_padding), and every unpadded source position."""
        T = tgt.shape[1]
        x = self.positional(self.tgt_embed(tgt) * self.embed_scale)
        return self.decoder(x, memory, tgt_mask=self.future[:T, :T], tgt_key_padding_mask=tgt_padding,
                            memory_key_padding_mask=src_padding, tgt_is_causal=True)

    def forward(self, src, tgt):
        """Teacher forcing: logits (B, T, tgt_vocab) for the next token at every target position."""
        memory = self.encode(src)
        return self.generator(self.decode(tgt, memory, self.padding(src), self.padding(tgt)))


def as_ids(ids):
    """Token ids as a tensor of the models' library (from a tensor, an array or nested lists)."""
    return ids if isinstance(ids, torch.Tensor) else torch.tensor(ids)


@contextlib.contextmanager
def eval_mode(model):
    """model.eval() inside the block; afterwards the mode it had before, also if the block raised."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


def greedy_decode(model, src, max_len, bos_id, eos_id):
    """Pick the most likely next token at every step. Returns ids (B, <= max_len), BOS first, a tensor
    of the model's library; after a sequence's EOS it is padded with pad_id."""
    src = as_ids(src)
    with eval_mode(model), torch.no_grad():
        memory = model.encode(src)
        src_padding = model.padding(src)
        ys = torch.full_like(src[:, :1], bos_id)  # (B, 1)
        finished = torch.zeros_like(ys[:, 0], dtype=torch.bool)
        for _ in range(max_len - 1):
            hidden = model.decode(ys, memory, src_padding)  # the whole prefix again: no cache
            next_token = model.generator(hidden[:, -1]).argmax(dim=-1)  # (B,)
            next_token = next_token.masked_fill(finished, model.config.pad_id)
            ys = torch.cat([ys, next_token[:, None]], dim=1)
            finished = finished | (next_token == eos_id)
            if finished.sum().item() == len(finished):
                break
    return ys


def beam_search(model, src, max_len, bos_id, eos_id, beam_size=4, length_penalty=0.6, return_candidates=False):
    """Keep the beam_size best prefixes by total log-probability; return the best finished sequence
    of each source (a list of int lists, BOS first, EOS last if reached).
    return_candidates=True: for each source, its up to beam_size best hypotheses instead, best first,
    as (ids, log_prob, score) with score the length-normalised log-prob that ranks them.

    Finished hypotheses are ranked by log p / ((5 + length) / 6) ** length_penalty (GNMT's length
    normalisation), so longer answers are not punished merely for having more terms.
    """
    def normalised(item):
        ids, score = item
        return score / ((5 + len(ids)) / 6) ** length_penalty

    src = as_ids(src)
    results = []
    with eval_mode(model), torch.no_grad():
        for row in range(src.shape[0]):
            one = src[row:row + 1]  # (1, S)
            memory, padding = model.encode(one), model.padding(one)
            beams = [(torch.full_like(one[0, :1], bos_id), 0.0)]  # (prefix ids (t,), log-probability)
            finished = []
            for _ in range(max_len - 1):
                prefixes = torch.stack([ids for ids, _ in beams])  # (k, t)
                k = prefixes.shape[0]
                hidden = model.decode(prefixes, memory.expand(k, -1, -1), padding.expand(k, -1))
                log_probs = F.log_softmax(model.generator(hidden[:, -1]), dim=-1).tolist()  # k lists of V
                candidates = sorted(((score + lp, b, token) for b, (_, score) in enumerate(beams)
                                     for token, lp in enumerate(log_probs[b])),
                                    key=lambda c: (-c[0], c[1], c[2]))[:2 * beam_size]  # ties: lowest token
                next_beams = []
                for score, b, token in candidates:
                    ids = torch.cat([beams[b][0], torch.full_like(beams[b][0][:1], token)])
                    (finished if token == eos_id else next_beams).append((ids, score))
                    if len(next_beams) == beam_size:
                        break
                beams = next_beams
                finished = sorted(finished, key=normalised, reverse=True)[:beam_size]
                if not beams:
                    break
                if len(finished) == beam_size:
                    # a live beam's log p only falls from here and its length divisor grows at most to that
                    # of max_len: stop once no live beam can still beat the worst finished hypothesis kept
                    best_possible = max(s for _, s in beams) / ((5 + max_len) / 6) ** length_penalty
                    if best_possible <= normalised(finished[-1]):
                        break
            ranked = sorted(finished or beams, key=normalised, reverse=True)
            if return_candidates:
                results.append([(ids.tolist(), log_prob, normalised((ids, log_prob))) for ids, log_prob in ranked])
            else:
                results.append(ranked[0][0].tolist())
    return results
