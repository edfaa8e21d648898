"""An encoder-decoder Transformer written the way The Annotated Transformer writes it, for either library.

    at = build(torch)                       # or build(minigrad)
    model = at.make_model(src_vocab=11, tgt_vocab=11, N=2)
    ys = at.greedy_decode(model, src, src_mask, max_len=10, start_symbol=0)

Paper order: the encoder-decoder frame, the stacks built by deep-copying one layer, a LayerNorm with its
own a_2/b_2 parameters, the residual sub-layer connection, the attention function, multi-head
attention, the feed-forward network, embeddings and positional encoding, then the training side
(batches and masks, the learning-rate schedule, label smoothing, the loss) and greedy decoding.
Written for these tests in the style of that notebook (not copied from it). Its imports are
`from torch.nn.functional import log_softmax, pad`; here those two names come from the `torch` given.
"""
import copy
import math
from types import SimpleNamespace


def build(torch):
    """The model's classes and functions with `torch` bound to the library given (minigrad or PyTorch)."""
    nn = torch.nn
    log_softmax, pad = torch.nn.functional.log_softmax, torch.nn.functional.pad
    LambdaLR = torch.optim.lr_scheduler.LambdaLR
    DataLoader = torch.utils.data.DataLoader

    # ---- the architecture ------------------------------------------------------------------------
    class EncoderDecoder(nn.Module):
        """Encode the source once, then decode the target against that memory."""

        def __init__(self, encoder, decoder, src_embed, tgt_embed, generator):
            super().__init__()
            self.encoder = encoder
            self.decoder = decoder
            self.src_embed = src_embed
            self.tgt_embed = tgt_embed
            self.generator = generator

        def forward(self, src, tgt, src_mask, tgt_mask):
            return self.decode(self.encode(src, src_mask), src_mask, tgt, tgt_mask)

        def encode(self, src, src_mask):
            return self.encoder(self.src_embed(src), src_mask)

        def decode(self, memory, src_mask, tgt, tgt_mask):
            return self.decoder(self.tgt_embed(tgt), memory, src_mask, tgt_mask)

    class Generator(nn.Module):
        """The last linear layer, then log-probabilities over the target vocabulary."""

        def __init__(self, d_model, vocab):
            super().__init__()
            self.proj = nn.Linear(d_model, vocab)

        def forward(self, x):
            return log_softmax(self.proj(x), dim=-1)

    def clones(module, N):
        """N independent copies of a module (deep copies: no shared weights)."""
        return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])

    class LayerNorm(nn.Module):
        """Normalise over the last dimension with the (unbiased) standard deviation, then scale and shift."""

        def __init__(self, features, eps=1e-6):
            super().__init__()
            self.a_2 = nn.Parameter(torch.ones(features))
            self.b_2 = nn.Parameter(torch.zeros(features))
            self.eps = eps

        def forward(self, x):
            mean = x.mean(-1, keepdim=True)
            std = x.std(-1, keepdim=True)
            return self.a_2 * (x - mean) / (std + self.eps) + self.b_2

    class Encoder(nn.Module):
        def __init__(self, layer, N):
            super().__init__()
            self.layers = clones(layer, N)
            self.norm = LayerNorm(layer.size)

        def forward(self, x, mask):
            for layer in self.layers:
                x = layer(x, mask)
            return self.norm(x)

    class SublayerConnection(nn.Module):
        """x + dropout(sublayer(norm(x))): the norm first, as the notebook does for simplicity."""

        def __init__(self, size, dropout):
            super().__init__()
            self.norm = LayerNorm(size)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x, sublayer):
            return x + self.dropout(sublayer(self.norm(x)))

    class EncoderLayer(nn.Module):
        def __init__(self, size, self_attn, feed_forward, dropout):
            super().__init__()
            self.self_attn = self_attn
            self.feed_forward = feed_forward
            self.sublayer = clones(SublayerConnection(size, dropout), 2)
            self.size = size

        def forward(self, x, mask):
            x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, mask))
            return self.sublayer[1](x, self.feed_forward)

    class Decoder(nn.Module):
        def __init__(self, layer, N):
            super().__init__()
            self.layers = clones(layer, N)
            self.norm = LayerNorm(layer.size)

        def forward(self, x, memory, src_mask, tgt_mask):
            for layer in self.layers:
                x = layer(x, memory, src_mask, tgt_mask)
            return self.norm(x)

    class DecoderLayer(nn.Module):
        """Masked self-attention, attention over the encoder's memory, feed-forward."""

        def __init__(self, size, self_attn, src_attn, feed_forward, dropout):
            super().__init__()
            self.size = size
            self.self_attn = self_attn
            self.src_attn = src_attn
            self.feed_forward = feed_forward
            self.sublayer = clones(SublayerConnection(size, dropout), 3)

        def forward(self, x, memory, src_mask, tgt_mask):
            m = memory
            x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, tgt_mask))
            x = self.sublayer[1](x, lambda x: self.src_attn(x, m, m, src_mask))
            return self.sublayer[2](x, self.feed_forward)

    def subsequent_mask(size):
        """(1, size, size), True where position i may look at position j (j <= i)."""
        attn_shape = (1, size, size)
        upper = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
        return upper == 0

    def attention(query, key, value, mask=None, dropout=None):
        """softmax(Q K^T / sqrt(d_k)) V, and the weights; mask == 0 marks what may not be attended."""
        d_k = query.size(-1)
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)  # (B, h, T, d_k) @ (B, h, d_k, S)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        p_attn = scores.softmax(dim=-1)
        if dropout is not None:
            p_attn = dropout(p_attn)
        return torch.matmul(p_attn, value), p_attn

    class MultiHeadedAttention(nn.Module):
        def __init__(self, h, d_model, dropout=0.1):
            super().__init__()
            assert d_model % h == 0
            self.d_k = d_model // h  # d_v = d_k
            self.h = h
            self.linears = clones(nn.Linear(d_model, d_model), 4)  # W_Q, W_K, W_V, W_O
            self.attn = None  # the last weights, kept for pictures
            self.dropout = nn.Dropout(p=dropout)

        def forward(self, query, key, value, mask=None):
            if mask is not None:
                mask = mask.unsqueeze(1)  # the same mask for every head
            nbatches = query.size(0)
            # project, then split d_model into h heads: (B, T, d_model) -> (B, h, T, d_k)
            query, key, value = [
                lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
                for lin, x in zip(self.linears, (query, key, value))
            ]
            x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)
            # heads side by side again: (B, h, T, d_k) -> (B, T, h * d_k)
            x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
            del query
            del key
            del value
            return self.linears[-1](x)

    class PositionwiseFeedForward(nn.Module):
        def __init__(self, d_model, d_ff, dropout=0.1):
            super().__init__()
            self.w_1 = nn.Linear(d_model, d_ff)
            self.w_2 = nn.Linear(d_ff, d_model)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.w_2(self.dropout(self.w_1(x).relu()))

    class Embeddings(nn.Module):
        def __init__(self, d_model, vocab):
            super().__init__()
            self.lut = nn.Embedding(vocab, d_model)
            self.d_model = d_model

        def forward(self, x):
            return self.lut(x) * math.sqrt(self.d_model)

    class PositionalEncoding(nn.Module):
        """Adds PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...), a fixed buffer."""

        def __init__(self, d_model, dropout, max_len=5000):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0)
            self.register_buffer("pe", pe)

        def forward(self, x):
            x = x + self.pe[:, : x.size(1)].requires_grad_(False)
            return self.dropout(x)

    def make_model(src_vocab, tgt_vocab, N=6, d_model=512, d_ff=2048, h=8, dropout=0.1):
        """The full model from its hyperparameters; matrices start Glorot/Xavier-uniform."""
        c = copy.deepcopy
        attn = MultiHeadedAttention(h, d_model)
        ff = PositionwiseFeedForward(d_model, d_ff, dropout)
        position = PositionalEncoding(d_model, dropout)
        model = EncoderDecoder(
            Encoder(EncoderLayer(d_model, c(attn), c(ff), dropout), N),
            Decoder(DecoderLayer(d_model, c(attn), c(attn), c(ff), dropout), N),
            nn.Sequential(Embeddings(d_model, src_vocab), c(position)),
            nn.Sequential(Embeddings(d_model, tgt_vocab), c(position)),
            Generator(d_model, tgt_vocab),
        )
        for p in model.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        return model

    # ---- training --------------------------------------------------------------------------------
    class Batch:
        """A batch of source and target ids with their masks; the target is shifted for teacher forcing."""

        def __init__(self, src, tgt=None, pad=2):
            self.src = src
            self.src_mask = (src != pad).unsqueeze(-2)
            if tgt is not None:
                self.tgt = tgt[:, :-1]
                self.tgt_y = tgt[:, 1:]
                self.tgt_mask = self.make_std_mask(self.tgt, pad)
                self.ntokens = (self.tgt_y != pad).data.sum()

        @staticmethod
        def make_std_mask(tgt, pad):
            """Hide padding and future words."""
            tgt_mask = (tgt != pad).unsqueeze(-2)
            return tgt_mask & subsequent_mask(tgt.size(-1)).type_as(tgt_mask.data)

    def collate_batch(batch, bos_id, eos_id, max_padding, pad_id=2, device="cpu"):
        """Lists of (src ids, tgt ids) pairs -> two (B, max_padding) tensors, framed by <s> </s>, padded with pad."""
        bs_id = torch.tensor([bos_id], device=device)
        es_id = torch.tensor([eos_id], device=device)
        src_list, tgt_list = [], []
        for (_src, _tgt) in batch:
            processed_src = torch.cat([bs_id, torch.tensor(_src, dtype=torch.int64, device=device), es_id], 0)
            processed_tgt = torch.cat([bs_id, torch.tensor(_tgt, dtype=torch.int64, device=device), es_id], 0)
            src_list.append(pad(processed_src, (0, max_padding - len(processed_src)), value=pad_id))
            tgt_list.append(pad(processed_tgt, (0, max_padding - len(processed_tgt)), value=pad_id))
        return torch.stack(src_list), torch.stack(tgt_list)

    def create_dataloader(pairs, batch_size, max_padding, pad_id=2, shuffle=False):
        """Batches of (src, tgt) id-list pairs, collated into padded tensors."""
        def collate_fn(batch):
            return collate_batch(batch, bos_id=0, eos_id=1, max_padding=max_padding, pad_id=pad_id)

        return DataLoader(pairs, batch_size=batch_size, shuffle=shuffle, collate_fn=collate_fn)

    def data_gen(V, batch_size, nbatches):
        """Random copy-task batches; every sequence starts with 1, and 0 is padding."""
        for i in range(nbatches):
            data = torch.randint(1, V, size=(batch_size, 10))
            data[:, 0] = 1
            src = data.requires_grad_(False).clone().detach()
            tgt = data.requires_grad_(False).clone().detach()
            yield Batch(src, tgt, 0)

    def rate(step, model_size, factor, warmup):
        """The paper's schedule: linear warm-up, then decay as step^-0.5 (LambdaLR starts at step 0)."""
        if step == 0:
            step = 1
        return factor * (model_size ** (-0.5) * min(step ** (-0.5), step * warmup ** (-1.5)))

    class LabelSmoothing(nn.Module):
        """KL divergence against a smoothed target: confidence on the right word, the rest spread over the
        other words except padding; a padding target's row is all zero."""

        def __init__(self, size, padding_idx, smoothing=0.0):
            super().__init__()
            self.criterion = nn.KLDivLoss(reduction="sum")
            self.padding_idx = padding_idx
            self.confidence = 1.0 - smoothing
            self.smoothing = smoothing
            self.size = size
            self.true_dist = None

        def forward(self, x, target):
            assert x.size(1) == self.size
            true_dist = x.data.clone()
            true_dist.fill_(self.smoothing / (self.size - 2))
            true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
            true_dist[:, self.padding_idx] = 0
            mask = torch.nonzero(target.data == self.padding_idx)
            if mask.dim() > 0:
                true_dist.index_fill_(0, mask.squeeze(), 0.0)
            self.true_dist = true_dist
            return self.criterion(x, true_dist.clone().detach())

    class SimpleLossCompute:
        """Generator, then the criterion over all positions, divided by the number of real tokens."""

        def __init__(self, generator, criterion):
            self.generator = generator
            self.criterion = criterion

        def __call__(self, x, y, norm):
            x = self.generator(x)
            sloss = self.criterion(x.contiguous().view(-1, x.size(-1)), y.contiguous().view(-1)) / norm
            return sloss.data * norm, sloss

    def run_epoch(data_iter, model, loss_compute, optimizer, scheduler):
        """Train on every batch; returns the per-batch losses (summed over tokens) and learning rates used."""
        losses, lrs = [], []
        for i, batch in enumerate(data_iter):
            out = model.forward(batch.src, batch.tgt, batch.src_mask, batch.tgt_mask)
            loss, loss_node = loss_compute(out, batch.tgt_y, batch.ntokens)
            loss_node.backward()
            lrs.append(optimizer.param_groups[0]["lr"])
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
            losses.append(loss.item())
        return losses, lrs

    def make_optimizer(model, warmup=400, factor=1.0):
        """Adam as in the paper (betas 0.9/0.98, eps 1e-9), its rate set by `rate` through LambdaLR."""
        optimizer = torch.optim.Adam(model.parameters(), lr=0.5, betas=(0.9, 0.98), eps=1e-9)
        d_model = model.src_embed[0].d_model
        lr_scheduler = LambdaLR(optimizer=optimizer,
                                lr_lambda=lambda step: rate(step, model_size=d_model, factor=factor, warmup=warmup))
        return optimizer, lr_scheduler

    # ---- decoding --------------------------------------------------------------------------------
    def greedy_decode(model, src, src_mask, max_len, start_symbol):
        """Feed back the most likely next word until max_len words (start symbol included)."""
        memory = model.encode(src, src_mask)
        ys = torch.zeros(1, 1).fill_(start_symbol).type_as(src.data)
        for i in range(max_len - 1):
            out = model.decode(memory, src_mask, ys, subsequent_mask(ys.size(1)).type_as(src.data))
            prob = model.generator(out[:, -1])
            _, next_word = torch.max(prob, dim=1)
            next_word = next_word.data[0]
            ys = torch.cat([ys, torch.zeros(1, 1).type_as(src.data).fill_(next_word)], dim=1)
        return ys

    return SimpleNamespace(
        EncoderDecoder=EncoderDecoder, Generator=Generator, clones=clones, LayerNorm=LayerNorm, Encoder=Encoder,
        SublayerConnection=SublayerConnection, EncoderLayer=EncoderLayer, Decoder=Decoder, DecoderLayer=DecoderLayer,
        subsequent_mask=subsequent_mask, attention=attention, MultiHeadedAttention=MultiHeadedAttention,
        PositionwiseFeedForward=PositionwiseFeedForward, Embeddings=Embeddings, PositionalEncoding=PositionalEncoding,
        make_model=make_model, Batch=Batch, collate_batch=collate_batch, create_dataloader=create_dataloader,
        data_gen=data_gen, rate=rate, LabelSmoothing=LabelSmoothing, SimpleLossCompute=SimpleLossCompute,
        run_epoch=run_epoch, make_optimizer=make_optimizer, greedy_decode=greedy_decode)
