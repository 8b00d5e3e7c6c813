// Cross-check of cuzk's BLS12-381 against @noble/curves (an independent implementation).
// Usage: node crosscheck.mjs <requests.txt> <answers.txt>
// One request per line, one answer line per request (same order):
//   g1mul <k hex>            -> compressed hex of k*G1
//   g2mul <k hex>            -> compressed hex of k*G2
//   g1dec <uncompressed hex> -> "<compressed hex> <uncompressed hex>" after noble decodes it
//   g2dec <uncompressed hex> -> same for G2
//   pair <a hex> <b hex>     -> the 12 Fp coefficients of e(a*G1, b*G2), big-endian hex, in the
//                               order c0.c0.c0 c0.c0.c1 c0.c1.c0 c0.c1.c1 c0.c2.c0 c0.c2.c1
//                                     c1.c0.c0 ... c1.c2.c1 (Fp12 = Fp6 + Fp6 w, Fp6 = Fp2 +
//                               Fp2 v + Fp2 v^2, Fp2 = Fp + Fp u), then "bilinear" or "NOT-bilinear"
//                               for noble's own check e(aG1, bG2) == e(abG1, G2)
// Scalars are reduced mod r by the caller and non-zero.
import { bls12_381 as bls } from '@noble/curves/bls12-381';
import { readFileSync, writeFileSync } from 'fs';

const [, , inPath, outPath] = process.argv;
const G1 = bls.G1.ProjectivePoint;
const G2 = bls.G2.ProjectivePoint;
const r = bls.params.r;
const Fp12 = bls.fields.Fp12;

const fpHex = (v) => v.toString(16).padStart(96, '0');
const fp12Hex = (f) => {
  const out = [];
  for (const c6 of [f.c0, f.c1])
    for (const c2 of [c6.c0, c6.c1, c6.c2]) out.push(fpHex(c2.c0), fpHex(c2.c1));
  return out.join(' ');
};

const answers = [];
for (const line of readFileSync(inPath, 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const [op, ...args] = line.trim().split(/\s+/);
  if (op === 'g1mul') answers.push(G1.BASE.multiply(BigInt('0x' + args[0])).toHex(true));
  else if (op === 'g2mul') answers.push(G2.BASE.multiply(BigInt('0x' + args[0])).toHex(true));
  else if (op === 'g1dec' || op === 'g2dec') {
    const P = (op === 'g1dec' ? G1 : G2).fromHex(args[0]);
    P.assertValidity();
    answers.push(P.toHex(true) + ' ' + P.toHex(false));
  } else if (op === 'pair') {
    const a = BigInt('0x' + args[0]), b = BigInt('0x' + args[1]);
    const e = bls.pairing(G1.BASE.multiply(a), G2.BASE.multiply(b));
    const e2 = bls.pairing(G1.BASE.multiply((a * b) % r), G2.BASE);
    answers.push(fp12Hex(e) + ' ' + (Fp12.eql(e, e2) ? 'bilinear' : 'NOT-bilinear'));
  } else {
    console.error(`crosscheck.mjs: unknown request '${op}' in ${inPath}`);
    process.exit(2);
  }
}
writeFileSync(outPath, answers.join('\n') + '\n');
