"""Models for the validation harness: none of them is in ridge's zoo.

Each entry is (name, builder, input shape). Builders return an eval-mode nn.Module with random weights; inputs are
small so exporting and counting stay fast on a couple of CPU cores. Run on Debian bookworm's python3-torch (1.13)
and python3-torchvision (0.14).
"""
import torch
import torch.nn as nn
import torchvision.models as tvm
import torchvision.models.segmentation as tvs
import torchvision.models.video as tvv


def tv(fn, **kw):
    return lambda: fn(weights=None, **kw)


class Encoder(nn.Module):
    """nn.TransformerEncoder over [seq, batch, d]."""

    def __init__(self, layers=2, d=64, heads=4, ff=128):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, layers)

    def forward(self, x):
        return self.encoder(x)


class Decoder(nn.Module):
    """nn.TransformerDecoder whose memory is the input itself."""

    def __init__(self, layers=2, d=64, heads=4, ff=128):
        super().__init__()
        layer = nn.TransformerDecoderLayer(d, heads, ff, dropout=0.0)
        self.decoder = nn.TransformerDecoder(layer, layers)

    def forward(self, x):
        return self.decoder(x, x)


class Seq2Seq(nn.Module):
    """nn.Transformer (encoder + decoder) with the same sequence for source and target."""

    def __init__(self, d=64, heads=4, ff=128):
        super().__init__()
        self.transformer = nn.Transformer(d, heads, 1, 1, ff, dropout=0.0)

    def forward(self, x):
        return self.transformer(x, x)


class Attention(nn.Module):
    """One nn.MultiheadAttention, self-attention."""

    def __init__(self, d=64, heads=8):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]


class Recurrent(nn.Module):
    """A recurrent layer followed by a Linear head over its output sequence."""

    def __init__(self, cell, inp=32, hidden=48, layers=1, bidirectional=False):
        super().__init__()
        self.rnn = cell(inp, hidden, num_layers=layers, bidirectional=bidirectional)
        self.head = nn.Linear(hidden * (2 if bidirectional else 1), 10)

    def forward(self, x):
        return self.head(self.rnn(x)[0])


class Conv3dNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv3d(3, 16, 3, padding=1), nn.BatchNorm3d(16), nn.ReLU(),
            nn.MaxPool3d(2),
            nn.Conv3d(16, 32, 3, padding=1, bias=False), nn.BatchNorm3d(32), nn.ReLU(),
            nn.AvgPool3d(2),
            nn.Conv3d(32, 32, (1, 3, 3), padding=(0, 1, 1)), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool3d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


class Conv3dPlain(nn.Module):
    """3-D convolutions with bias, no normalisation."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv3d(2, 8, 3, padding=1)
        self.r1 = nn.ReLU()
        self.c2 = nn.Conv3d(8, 8, 3, stride=2, padding=1, groups=2)
        self.r2 = nn.ReLU()

    def forward(self, x):
        return self.r2(self.c2(self.r1(self.c1(x))))


class TransposedNet2d(nn.Module):
    """A DCGAN-style generator: ConvTranspose2d with BatchNorm, ReLU and a Tanh."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(32, 64, 4, 1, 0, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
            nn.ConvTranspose2d(64, 32, 4, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
            nn.ConvTranspose2d(32, 3, 4, 2, 1), nn.Tanh())

    def forward(self, x):
        return self.net(x)


class TransposedPlain2d(nn.Module):
    """ConvTranspose2d with bias, output padding and groups."""

    def __init__(self):
        super().__init__()
        self.up1 = nn.ConvTranspose2d(16, 16, 3, stride=2, padding=1, output_padding=1)
        self.act = nn.ReLU()
        self.up2 = nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1, groups=4)

    def forward(self, x):
        return self.up2(self.act(self.up1(x)))


class TransposedNet3d(nn.Module):
    def __init__(self):
        super().__init__()
        self.up1 = nn.ConvTranspose3d(8, 8, 2, stride=2)
        self.act = nn.ReLU()
        self.up2 = nn.ConvTranspose3d(8, 4, 3, stride=1, padding=1, bias=False)

    def forward(self, x):
        return self.up2(self.act(self.up1(x)))


class UNetTiny(nn.Module):
    """Encoder-decoder with max-pooling, nearest and bilinear nn.Upsample and a skip concat."""

    def __init__(self):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.enc2 = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.ReLU())
        self.up_nearest = nn.Upsample(scale_factor=2, mode="nearest")
        self.dec = nn.Sequential(nn.Conv2d(48, 16, 3, padding=1), nn.ReLU())
        self.up_bilinear = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.out = nn.Conv2d(16, 2, 1)

    def forward(self, x):
        a = self.enc1(x)
        b = self.up_nearest(self.enc2(self.pool(a)))
        return self.out(self.up_bilinear(self.dec(torch.cat([a, b], 1))))


class Conv1dNet(nn.Module):
    """1-D convolutions, BatchNorm1d, pooling and a Linear head (audio-style)."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(1, 16, 9, stride=2, padding=4), nn.BatchNorm1d(16), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(16, 32, 5, padding=2), nn.ReLU(), nn.AvgPool1d(2), nn.AdaptiveAvgPool1d(1))
        self.fc = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc(torch.flatten(self.net(x), 1))


class MLPActs(nn.Module):
    """Linear layers with a spread of activation modules and LayerNorm."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 128), nn.SiLU(), nn.LayerNorm(128),
            nn.Linear(128, 64), nn.LeakyReLU(0.1), nn.Linear(64, 64), nn.ELU(), nn.Linear(64, 10),
            nn.Softmax(dim=-1))

    def forward(self, x):
        return self.net(x)


# (name, builder, input shape)
MODELS = [
    # torchvision classification
    ("resnext50_32x4d", tv(tvm.resnext50_32x4d), (1, 3, 64, 64)),
    ("wide_resnet101_2", tv(tvm.wide_resnet101_2), (1, 3, 64, 64)),
    ("squeezenet1_0", tv(tvm.squeezenet1_0), (1, 3, 96, 96)),
    ("squeezenet1_1", tv(tvm.squeezenet1_1), (1, 3, 96, 96)),
    ("shufflenet_v2_x0_5", tv(tvm.shufflenet_v2_x0_5), (1, 3, 64, 64)),
    ("shufflenet_v2_x1_0", tv(tvm.shufflenet_v2_x1_0), (1, 3, 64, 64)),
    ("mobilenet_v3_small", tv(tvm.mobilenet_v3_small), (1, 3, 64, 64)),
    ("mobilenet_v3_large", tv(tvm.mobilenet_v3_large), (1, 3, 64, 64)),
    ("mnasnet0_5", tv(tvm.mnasnet0_5), (1, 3, 64, 64)),
    ("efficientnet_b0", tv(tvm.efficientnet_b0), (1, 3, 64, 64)),
    ("efficientnet_b1", tv(tvm.efficientnet_b1), (1, 3, 64, 64)),
    ("efficientnet_v2_s", tv(tvm.efficientnet_v2_s), (1, 3, 64, 64)),
    ("regnet_x_400mf", tv(tvm.regnet_x_400mf), (1, 3, 64, 64)),
    ("regnet_y_400mf", tv(tvm.regnet_y_400mf), (1, 3, 64, 64)),
    ("regnet_y_800mf", tv(tvm.regnet_y_800mf), (1, 3, 64, 64)),
    ("inception_v3", tv(tvm.inception_v3, aux_logits=False, init_weights=False), (1, 3, 96, 96)),
    ("densenet169", tv(tvm.densenet169), (1, 3, 64, 64)),
    ("convnext_tiny", tv(tvm.convnext_tiny), (1, 3, 64, 64)),
    ("vit_b_16", tv(tvm.vit_b_16, image_size=64), (1, 3, 64, 64)),
    ("swin_t", tv(tvm.swin_t), (1, 3, 64, 64)),
    ("mnasnet0_75", tv(tvm.mnasnet0_75), (1, 3, 64, 64)),
    # torchvision segmentation
    ("fcn_resnet50", tv(tvs.fcn_resnet50, weights_backbone=None, aux_loss=False), (1, 3, 64, 64)),
    ("deeplabv3_mobilenet_v3_large", tv(tvs.deeplabv3_mobilenet_v3_large, weights_backbone=None, aux_loss=False),
     (1, 3, 64, 64)),
    ("lraspp_mobilenet_v3_large", tv(tvs.lraspp_mobilenet_v3_large, weights_backbone=None), (1, 3, 64, 64)),
    # torchvision video
    ("r3d_18", tv(tvv.r3d_18), (1, 3, 4, 56, 56)),
    ("mc3_18", tv(tvv.mc3_18), (1, 3, 4, 56, 56)),
    ("r2plus1d_18", tv(tvv.r2plus1d_18), (1, 3, 4, 56, 56)),
    # torch.nn transformer modules ([seq, batch, d])
    ("nn_transformer_encoder", Encoder, (16, 1, 64)),
    ("nn_transformer_decoder", Decoder, (16, 1, 64)),
    ("nn_transformer", Seq2Seq, (16, 1, 64)),
    ("nn_multihead_attention", Attention, (16, 1, 64)),
    # torch.nn recurrent modules ([seq, batch, features])
    ("nn_lstm", lambda: Recurrent(nn.LSTM), (12, 1, 32)),
    ("nn_lstm_bi2", lambda: Recurrent(nn.LSTM, layers=2, bidirectional=True), (12, 1, 32)),
    ("nn_gru", lambda: Recurrent(nn.GRU), (12, 1, 32)),
    ("nn_gru_bi", lambda: Recurrent(nn.GRU, bidirectional=True), (12, 1, 32)),
    ("nn_rnn", lambda: Recurrent(nn.RNN), (12, 1, 32)),
    ("nn_rnn_bi2", lambda: Recurrent(nn.RNN, layers=2, bidirectional=True), (12, 1, 32)),
    # 3-D, transposed, upsampling, 1-D, activations
    ("conv3d_net", Conv3dNet, (1, 3, 8, 32, 32)),
    ("conv3d_plain", Conv3dPlain, (1, 2, 8, 16, 16)),
    ("convtranspose2d_dcgan", TransposedNet2d, (1, 32, 1, 1)),
    ("convtranspose2d_plain", TransposedPlain2d, (1, 16, 8, 8)),
    ("convtranspose3d_net", TransposedNet3d, (1, 8, 4, 8, 8)),
    ("unet_upsample", UNetTiny, (1, 3, 32, 32)),
    ("conv1d_net", Conv1dNet, (1, 1, 256)),
    ("mlp_activations", MLPActs, (4, 64)),
]
