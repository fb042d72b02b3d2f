// graft::linalg on complex matrices (c64, c128) and the eig primitive:
// values against JAX 0.10.2's (x64; the script is in the comment of each
// block's values), reconstructions (L L^H = A, Q R = A, U S V^H = A,
// A v = v w) in both precisions at LAPACK's sizes and below them, every form
// of triangular_solve (conjugate_a included) against a dense product,
// derivatives against JAX's (its complex conventions) and check_grads, eig
// under vmap and jit, and the dtypes LAPACK lacks refused.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "api/dispatch.h"
#include "graft/graft.h"
#include "graft/testing.h"
#include "ir/dtype.h"
#include "linalg/linalg_helpers.h"

using namespace graft;
using graft::test::max_abs_diff;
using graft::test::mT;

namespace {

// JAX 0.10.2's values (jax_enable_x64) for Z (3x3 complex), B (3x2), W (3x3
// weights), R (3x3 real) and H(z) = z z^H + 3 I, as built below; each name is
// the JAX expression in the test that reads it.
struct JaxValues {
  const std::vector<double> chol_re{2.151743479135001,
                                    0.0,
                                    0.0,
                                    0.5902190536720199,
                                    2.743411506767507,
                                    0.0,
                                    -0.32067019451471945,
                                    0.47896412080512873,
                                    2.3734284636446814};
  const std::vector<double> chol_im{
      0.0, 0.0, 0.0, 0.25560667678709525, 0.0, 0.0, -0.4879763829571818, 0.4432610686362333, 0.0};
  const std::vector<double> tri0_re{0.46473941234017313, 0.9294788246803463, 0.07361048242098607,
                                    -0.5471581313645492, 0.2571685304468722, 0.47587509784725607};
  const std::vector<double> tri0_im{-0.09294788246803463, 0.18589576493606927, 0.3412062361631591,
                                    -0.09014331804495096, 0.2531873385220936,  0.21019561648541762};
  const std::vector<double> tri1_re{0.40673482640464714, 1.1230979767467917,  0.20103258252100858,
                                    -0.436423696511285,  0.12639942791421416, 0.2949319984664997};
  const std::vector<double> tri1_im{-0.13276553923610443, 0.2828064917503506, 0.29995152778043216,
                                    0.010865638630000988, 0.2527988558284283, -0.12639942791421416};
  const std::vector<double> tri2_re{0.46768803848703283, 1.0406610301731378,  0.11934167271174058,
                                    -0.395578241606651,  0.12639942791421416, 0.2949319984664997};
  const std::vector<double> tri2_im{-0.1632421452772973, 0.024059847953681053, 0.34079698268506614,
                                    0.10617170007414697, 0.2527988558284283,   -0.12639942791421416};
  const std::vector<double> solve_re{1.2782515989312855,  3.320072122222305,  -0.5544737987036058,
                                     -1.6102049381371355, 1.0105431983241664, 1.6373852009750995};
  const std::vector<double> solve_im{-1.0996509085225652, -0.9380063501729868, 0.062496140720125035,
                                     -1.1604095887895536, 0.10061560195756847, 0.18268520038798275};
  const std::vector<double> inv_re{1.4311981249517902,  -0.42013664432046605, 0.10241946733130974,
                                   -0.4066329607706858, 0.6801362029706889,   -0.4754551824485316,
                                   0.5415786919566837,  -0.24735225563141056, 0.7130005650491872};
  const std::vector<double> inv_im{-0.40138940149123586, 0.2356220693514365,   -0.5704931759833647,
                                   -0.5330270338885769,  0.19421414736588075,  0.07408805090018142,
                                   0.19804862662274492,  -0.09426664369488313, -0.40810682608166626};
  const std::vector<double> det_re{1.7669999999999995};
  const std::vector<double> det_im{1.3479999999999996};
  const std::vector<double> slogdet_sign_re{0.7950597330483054};
  const std::vector<double> slogdet_sign_im{0.6065311376056115};
  const std::vector<double> slogdet_log{0.7986212245781077};
  const std::vector<double> q_re{-0.7254762501100116, 0.04150949553448184, -0.5217334536395656,
                                 -0.1450952500220023, -0.848428931454789,  0.2382884491445877,
                                 0.2901905000440046,  -0.3918244805754882, -0.6868738611300961};
  const std::vector<double> q_im{-0.21764287503300347, -0.34056654290790817, 0.19079146851797105,
                                 -0.4352857500660069,  0.06792462905642493,  -0.0908124014263756,
                                 0.3627381250550058,   -0.0657233679295964,  -0.3931524393180876};
  const std::vector<double> r_re{-1.3784048752090223,
                                 -0.4280309875649069,
                                 0.6674381501012108,
                                 0.0,
                                 -1.6736817279028262,
                                 -1.3693102072374843,
                                 0.0,
                                 0.0,
                                 -0.9633566855346201};
  const std::vector<double> r_im{0.0, 1.1897810501804191, -0.3917571750594063, 0.0, 0.0, -0.5176737238550311, 0.0, 0.0,
                                 0.0};
  const std::vector<double> eigh_w{3.217026018039603, 6.866202634698351, 8.886771347262046};
  const std::vector<double> eigh_absv{0.7930664035726434,  0.5846917203578501, 0.17082526648400376,
                                      0.37560154660483247, 0.269636764271312,  0.8866901902814507,
                                      0.4795509959455943,  0.7651350256642775, 0.4296501306753138};
  const std::vector<double> svals{2.426266957130242, 1.9662661657818223, 0.4658605135012017};
  const std::vector<double> eigR_w_re{0.5960904860100049, 0.5960904860100049, 1.307819027979989};
  const std::vector<double> eigR_w_im{1.7565645938834433, -1.7565645938834433, 0.0};
  const std::vector<double> eigZ_w_re{0.5035240372408059, 2.081062244497063, 1.915413718262131};
  const std::vector<double> eigZ_w_im{0.10811943560156849, 0.10406972868036858, 0.7878108357180627};
  const std::vector<double> eigR_absv{0.7275623140115407,  0.7275623140115407,  0.522555666310734,
                                      0.6556808031170964,  0.6556808031170964,  0.08042628863460313,
                                      0.20183102748064313, 0.20183102748064313, 0.848803385774944};
  const std::vector<double> pinv_re{1.4311981249517893,   -0.4201366443204657,  0.10241946733130912,
                                    -0.40663296077068556, 0.6801362029706888,   -0.47545518244853124,
                                    0.5415786919566834,   -0.24735225563141033, 0.7130005650491873};
  const std::vector<double> pinv_im{-0.401389401491236,  0.23562206935143645,  -0.5704931759833646,
                                    -0.5330270338885762, 0.19421414736588063,  0.07408805090018172,
                                    0.1980486266227446,  -0.09426664369488325, -0.4081068260816666};
  const std::vector<double> lstsq_re{1.2782515989312844, 3.320072122222302,  -0.5544737987036055,
                                     -1.610204938137135, 1.0105431983241666, 1.6373852009750989};
  const std::vector<double> lstsq_im{-1.0996509085225654, -0.9380063501729874, 0.06249614072012599,
                                     -1.1604095887895518, 0.10061560195756836, 0.18268520038798197};
  const std::vector<double> g_chol_re{0.39084902493507034,  0.10436126777588334, 0.012661489439758228,
                                      -0.06465170473327833, 0.6700648133969487,  0.3785109556635058,
                                      0.05582521932844499,  0.14483265252270788, 0.4115598688911747};
  const std::vector<double> g_chol_im{0.13212845788914995,  0.12973988804948905,  -0.639515428012468,
                                      -0.33020962347050886, 0.005819248166212182, 0.25659480546012164,
                                      0.2915940204284495,   -0.3207950121910973,  -0.5209904494982465};
  const std::vector<double> g_solve_re{-60.90720421741322,  25.69628999386677,   -29.575647027833256,
                                       25.35503342705873,   -14.192731233990457, 14.06922725955921,
                                       -13.366492735178443, 17.86273211267399,   -13.536097419133919};
  const std::vector<double> g_solve_im{12.372865449689812,  20.315479325067237, -8.40839135191515,
                                       -13.467024718455008, -5.607063853006096, -0.19039228286700682,
                                       33.258914161498254,  -5.824467149493154, 11.637365657973968};
  const std::vector<double> g_eigvalsh_re{3.5943199725898705,  2.783251133757322,  -1.168232415952849,
                                          1.0359540881508216,  11.380438649002881, 5.110332395073736,
                                          -2.1192875038444687, 1.7165384395376881, 6.553644938631616};
  const std::vector<double> g_eigvalsh_im{-1.230118648670357,  1.462651316601547,   -1.4814673057507557,
                                          -3.7388302252872805, 0.35141043088752805, -0.6580712624607883,
                                          1.9540687571546882,  -2.5441396028538334, -3.8543198476943843};
  const std::vector<double> g_eighv_re{0.3565496690431242,   0.3182105599354592,    -0.07021086889277517,
                                       0.018758535494244666, -0.059535722908140826, 0.015743194225580466,
                                       0.03528345833535154,  0.05514486947806956,   -0.2781457384489322};
  const std::vector<double> g_eighv_im{-0.13676560155687056, 0.17841157564993598,   -0.10773790854389076,
                                       -0.04111825651007171, -0.021768403338391105, 0.044861607923313784,
                                       -0.11102740004269149, -0.04523902295328866,  0.12248520090776861};
  const std::vector<double> g_svals_re{2.4454208953940157,   -0.2950993299166854, 0.38699713393342466,
                                       -0.38968590635439965, 1.365542704101617,   -0.355340337446182,
                                       -0.04303560859849853, -0.7973436942111365, 1.7535816166895892};
  const std::vector<double> g_svals_im{-0.663692330602293,  -0.6249994876349665, -0.09582362081621522,
                                       0.169428821031814,   0.3043431886167367,  -0.2873403710397125,
                                       -0.2711850932277896, 0.20550879274175665, -0.876136603968581};
  const std::vector<double> g_svd_re{0.91381918528406,    0.22679624135352053,  0.11444260163621506,
                                     0.16717369617882666, 1.5927444540569509,   -0.21704881529969147,
                                     0.19620829029987644, -0.29424278653247143, 0.4294612937144079};
  const std::vector<double> g_svd_im{-0.25228442110361826, -0.20862833324727195, -0.2734501325275151,
                                     0.030755716336677126, 0.1854076838040963,   -0.39226645731027276,
                                     0.07553137576573234,  0.2640532865158449,   -0.10225655480475868};
  const std::vector<double> g_qr_re{-1.4053411945992058, 0.5274612696992506,  -0.4555457479262753,
                                    0.7758060417362639,  -0.6923049266787262, 0.31852230873412307,
                                    0.3303655679056159,  -0.5393630781192785, 0.007098651995626185};
  const std::vector<double> g_qr_im{0.4159754271596757,   0.3388062877985273,  -0.20975404619280832,
                                    -0.9917157036956343,  -0.5568609373568627, 0.9462324992164067,
                                    -0.10558798660318733, -1.1230784332879435, 0.42058319009038325};
  const std::vector<double> g_logdet_re{1.4311981249517907,   -0.40663296077068584, 0.5415786919566836,
                                        -0.42013664432046605, 0.6801362029706889,   -0.24735225563141056,
                                        0.10241946733130966,  -0.4754551824485316,  0.7130005650491872};
  const std::vector<double> g_logdet_im{-0.40138940149123586, -0.5330270338885769, 0.19804862662274494,
                                        0.23562206935143654,  0.19421414736588072, -0.09426664369488313,
                                        -0.5704931759833648,  0.07408805090018145, -0.40810682608166626};
  const std::vector<double> g_sign_re{-0.31912855039804106, -0.423788331270982,  0.15746048821326303,
                                      0.18733361955884242,  0.1544118481589214,  -0.07494761257141347,
                                      -0.4535761522032139,  0.05890442597076752, -0.3244693041996808};
  const std::vector<double> g_sign_im{-1.1378879991634057,  0.32329749323898344, -0.43058741025173136,
                                      0.33403372827724054,  -0.5407489079703639, 0.19665981833120547,
                                      -0.08142959435538075, 0.3780152704339628,  -0.5668780389112976};
  const std::vector<double> g_det_re{
      1.897, -1.1920000000000002, 1.0710000000000002, -0.43799999999999994, 1.29, -0.493, -0.4110000000000001,
      -0.69, 0.7349999999999999};
  const std::vector<double> g_det_im{-2.0900000000000003,
                                     -0.44699999999999995,
                                     -0.22800000000000012,
                                     0.8030000000000002,
                                     -0.37400000000000005,
                                     0.09800000000000005,
                                     -1.021,
                                     0.599,
                                     -1.376};
  const std::vector<double> g_eigvalsR{0.9996526865163599,  -0.5951679606191826, 0.22151866299718442,
                                       0.8305642292908415,  0.7920116291936496,  0.0555104226978968,
                                       0.11102084539579336, 0.41528211464542086, 1.1661839546100503};
  const std::vector<double> g_eigvalsZ_re{0.33050465855787736, -0.9897561134700572, -0.28126334918411927,
                                          -0.7252625414101259, -0.3915156203027844, 0.8137721107168134,
                                          -0.9808125205546105, -0.6765662071627195, 1.8591780985679573};
  const std::vector<double> g_eigvalsZ_im{0.3963631073107009,   0.26312342297342467, -0.07624514481668299,
                                          0.9824523035634016,   1.501937852251303,   0.13807398006710608,
                                          0.029645145479575363, -1.0580392797496567, 0.8986383102670661};
  const std::vector<double> g_tri2_a_re{-1.2352163426816878,
                                        0.0,
                                        0.0,
                                        0.3800881909634514,
                                        -0.273239199053274,
                                        0.0,
                                        -0.29904229980560726,
                                        0.08538889548020594,
                                        -0.205774144696455};
  const std::vector<double> g_tri2_a_im{-1.3877787807814457e-17,
                                        0.0,
                                        0.0,
                                        0.2777975804719125,
                                        -0.09517875965474837,
                                        0.0,
                                        0.00021353556745990106,
                                        0.032030130489878385,
                                        -0.0838651616077378};
  const std::vector<double> g_tri2_b_re{0.43470612832998384,  0.9672723912159665, -0.020657391421036033,
                                        -0.49440009735076823, 0.2455412882536832, 0.47111404314361005};
  const std::vector<double> g_tri2_b_im{0.15173011733064062,  -0.0223631191979753,  -0.24058883662365968,
                                        0.017531828619171106, -0.23720618294662627, -0.1912523811330073};
  const std::vector<double> g_pinv_re{-1.5476449102456815, 0.8152642337236536,  -1.3943402638526061,
                                      0.45452816254219586, -0.4579056176789165, 0.4477186214934094,
                                      -0.7443766287723194, 0.5519035903554229,  -0.4170271068756683};
  const std::vector<double> g_pinv_im{0.5597063619835824,   0.5535293118843398,   0.36568208171982935,
                                      -0.12364975510730665, -0.23185568752429844, -0.37651083644556005,
                                      0.4204348074776341,   0.3310289463562203,   0.5399901750339813};
};

Array cz(const std::vector<double>& re, const std::vector<double>& im, Shape s) {
  return complex(array<double>(re, s), array<double>(im, s));
}
Array z3() {
  return cz({1.0, 0.5, -0.3, 0.2, 2.0, 0.7, -0.4, 0.1, 1.5}, {0.3, -0.2, 0.4, 0.6, -0.1, 0.2, -0.5, 0.3, 0.8}, {3, 3});
}
Array b32() { return cz({1, 2, 0.5, -1, 0.3, 0.7}, {-0.2, 0.4, 1.0, 0.1, 0.6, -0.3}, {3, 2}); }
Array w3() {
  return cz({0.7, -0.2, 0.5, 0.1, 0.9, -0.4, 0.3, 0.2, 0.6}, {0.2, 0.5, -0.1, -0.3, 0.4, 0.8, 0.6, -0.7, 0.1}, {3, 3});
}
Array r3() { return array<double>({{1.0, 2.0, 0.0}, {-1.5, 0.5, 1.0}, {0.5, 0.0, 1.0}}); }
// a's conjugate transpose.
Array mH(const Array& a) { return conj(mT(a)); }
Array hermitian(const Array& z) { return matmul(z, mH(z)) + 3.0 * eye(z.shape().back(), z.dtype()); }

// max |a - b| over real and imaginary parts.
double cdiff(const Array& a, const Array& b) {
  if (!ir::is_complex(a.dtype()) && !ir::is_complex(b.dtype())) return max_abs_diff(a, b);
  return std::max(max_abs_diff(real(a), real(b)), max_abs_diff(imag(a), imag(b)));
}
double cdiff(const Array& a, const std::vector<double>& re, const std::vector<double>& im) {
  return cdiff(a, cz(re, im, a.shape()));
}

// Eigenvalues sorted by real, then imaginary part (LAPACK's order may differ by build).
std::vector<std::complex<double>> sorted(const Array& w) {
  const std::vector<double> re = astype(real(w), DType::f64).to_vector<double>();
  const std::vector<double> im = astype(imag(w), DType::f64).to_vector<double>();
  std::vector<std::complex<double>> v;
  for (size_t i = 0; i < re.size(); ++i) v.emplace_back(re[i], im[i]);
  std::sort(v.begin(), v.end(),
            [](auto x, auto y) { return x.real() != y.real() ? x.real() < y.real() : x.imag() < y.imag(); });
  return v;
}
double sorted_diff(const Array& w, const std::vector<double>& re, const std::vector<double>& im) {
  const auto a = sorted(w), b = sorted(cz(re, im, {static_cast<int64_t>(re.size())}));
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// A batch of well-conditioned complex matrices.
Array random_complex(uint64_t seed, Shape s, DType dt) {
  const DType r = dt == DType::c64 ? DType::f32 : DType::f64;
  return complex(random::normal(random::key(seed), s, r), random::normal(random::key(seed + 1), s, r));
}

// f(a, b)'s derivatives at complex (a, b) along complex directions: the JVP
// against central differences, and reverse mode against the JVP through
// re(sum(ct * J t)) = re(sum(vjp(ct) * t)) (JAX's transpose is the bilinear
// one; the real part holds for maps that are only real-linear too).
template <class F>
void check_complex_derivatives(F f, const Array& a, const Array& b) {
  const Array da = random_complex(101, a.shape(), a.dtype()), db = random_complex(103, b.shape(), b.dtype());
  const auto [y, dy] = jvp(f, std::make_tuple(a, b), std::make_tuple(da, db));
  const double h = 1e-6;
  const Array fd = (f(a + h * da, b + h * db) - f(a - h * da, b - h * db)) / (2 * h);
  CHECK(cdiff(dy, fd) < 1e-7 * (1 + max(abs(dy)).template item<double>()));
  const Array ct = random_complex(105, y.shape(), y.dtype());
  const auto [value, back] = vjp(f, a, b);
  const auto [ca, cb] = back(ct);
  const double forward = real(sum(ct * dy)).template item<double>();
  const double reverse = real(sum(ca * da) + sum(cb * db)).template item<double>();
  CHECK(std::abs(forward - reverse) < 1e-10 * (1 + std::abs(forward)));
}

}  // namespace

TEST_CASE("linalg: complex factorizations and solves are JAX's (c128)", "[linalg][complex]") {
  const JaxValues ref;
  const Array z = z3(), b = b32(), h = hermitian(z3());
  const Array l = linalg::cholesky(h);
  CHECK(l.dtype() == DType::c128);
  CHECK(cdiff(l, ref.chol_re, ref.chol_im) < 1e-13);  // jnp.linalg.cholesky(H(Z))
  // solve_triangular(L, B, lower=True, trans=t)
  CHECK(cdiff(linalg::solve_triangular(l, b, true, 0), ref.tri0_re, ref.tri0_im) < 1e-13);
  CHECK(cdiff(linalg::solve_triangular(l, b, true, 1), ref.tri1_re, ref.tri1_im) < 1e-13);
  CHECK(cdiff(linalg::solve_triangular(l, b, true, 2), ref.tri2_re, ref.tri2_im) < 1e-13);
  CHECK(cdiff(linalg::cho_solve(linalg::cho_factor(h), b), linalg::solve(h, b)) < 1e-13);
  CHECK(cdiff(linalg::cho_solve(linalg::cho_factor(h, false), b), linalg::solve(h, b)) < 1e-13);
  CHECK(cdiff(linalg::solve(z, b), ref.solve_re, ref.solve_im) < 1e-13);
  CHECK(cdiff(linalg::inv(z), ref.inv_re, ref.inv_im) < 1e-13);
  CHECK(cdiff(linalg::det(z), ref.det_re, ref.det_im) < 1e-13);
  const auto [sign, logdet] = linalg::slogdet(z);
  CHECK(cdiff(sign, ref.slogdet_sign_re, ref.slogdet_sign_im) < 1e-13);
  CHECK(logdet.dtype() == DType::f64);
  CHECK(max_abs_diff(logdet, array<double>(ref.slogdet_log, {})) < 1e-13);
  const auto [q, r] = linalg::qr(z);  // LAPACK's zgeqrf and zungqr: JAX's phases
  CHECK(cdiff(q, ref.q_re, ref.q_im) < 1e-13);
  CHECK(cdiff(r, ref.r_re, ref.r_im) < 1e-13);
  const auto [w, v] = linalg::eigh(h);
  CHECK(w.dtype() == DType::f64);
  CHECK(max_abs_diff(w, array<double>(ref.eigh_w, {3})) < 1e-13);
  CHECK(max_abs_diff(abs(v), array<double>(ref.eigh_absv, {3, 3})) < 1e-12);  // phases are LAPACK's choice
  CHECK(max_abs_diff(linalg::svdvals(z), array<double>(ref.svals, {3})) < 1e-13);
  CHECK(cdiff(linalg::pinv(z), ref.pinv_re, ref.pinv_im) < 1e-12);
  CHECK(cdiff(linalg::lstsq(z, b), ref.lstsq_re, ref.lstsq_im) < 1e-12);
  // eig: a real matrix with a complex pair, and a complex matrix.
  const auto [wr, vr] = linalg::eig(r3());
  CHECK(wr.dtype() == DType::c128);
  CHECK(sorted_diff(wr, ref.eigR_w_re, ref.eigR_w_im) < 1e-13);
  CHECK(sorted_diff(linalg::eigvals(z), ref.eigZ_w_re, ref.eigZ_w_im) < 1e-13);
  CHECK(cdiff(matmul(astype(r3(), DType::c128), vr), vr * expand_dims(wr, 0)) < 1e-13);
  // LAPACK's normalization: unit columns, the largest entry of each real.
  CHECK(max_abs_diff(sum(abs(vr) * abs(vr), {0}), ones({3}, DType::f64)) < 1e-14);
  CHECK(linalg::eigvals(astype(r3(), DType::f32)).dtype() == DType::c64);
}

TEST_CASE("linalg: complex decompositions reconstruct in c64 and c128, below and at LAPACK's sizes",
          "[linalg][complex]") {
  for (DType dt : {DType::c64, DType::c128}) {
    const double tol = dt == DType::c64 ? 2e-4 : 1e-11;
    for (int64_t n : {5, 130}) {
      INFO(dtype_name(dt) << " n " << n);
      const Shape s = n == 5 ? Shape{2, n, n} : Shape{n, n};
      const Array a = random_complex(7, s, dt) + static_cast<double>(n) * eye(n, dt);
      const Array h = matmul(a, mH(a));
      const Array scale = max(abs(h));
      const Array l = linalg::cholesky(h);
      CHECK(cdiff(matmul(l, mH(l)) / scale, h / scale) < tol);
      CHECK(max_abs_diff(abs(triu(l, 1)), zeros_like(abs(triu(l, 1)))) == 0);
      const Array rhs = random_complex(9, n == 5 ? Shape{2, n, 3} : Shape{n, 3}, dt);
      for (int trans : {0, 1, 2}) {
        const Array x = linalg::solve_triangular(l, rhs, true, trans);
        const Array op = trans == 0 ? l : trans == 1 ? mT(l) : mH(l);
        CHECK(cdiff(matmul(op, x), rhs) < tol * 10);
      }
      const Array x = linalg::solve(a, rhs);
      CHECK(cdiff(matmul(a, x), rhs) < tol * 10);
      const auto [p, lo, up] = linalg::lu(a);
      CHECK(cdiff(matmul(astype(p, dt), matmul(lo, up)), a) < tol * n);
      const auto [q, r] = linalg::qr(a);
      CHECK(cdiff(matmul(q, r), a) < tol * n);
      CHECK(cdiff(matmul(mH(q), q), broadcast_to(eye(n, dt), q.shape())) < tol);
      const auto [w, v] = linalg::eigh(h);
      CHECK(cdiff(matmul(h, v) / scale, v * expand_dims(astype(w, dt), -2) / scale) < tol);
      const auto [u, sv, vh] = linalg::svd(a, false);
      CHECK(cdiff(matmul(u * expand_dims(astype(sv, dt), -2), vh), a) < tol * n);
      const auto [ew, ev] = linalg::eig(a);
      CHECK(cdiff(matmul(a, ev), ev * expand_dims(ew, -2)) < tol * n);
    }
  }
}

TEST_CASE("linalg: triangular_solve with conjugate_a in every form equals a dense solve", "[linalg][complex]") {
  const int64_t m = 4, n = 3;
  const Array raw = random_complex(21, {m, m}, DType::c128) + 4.0 * eye(m, DType::c128);
  const Array b_left = random_complex(23, {m, n}, DType::c128);
  const Array b_right = random_complex(25, {n, m}, DType::c128);
  for (int lower : {0, 1})
    for (int transpose_a : {0, 1})
      for (int conjugate_a : {0, 1})
        for (int left : {0, 1}) {
          INFO("lower " << lower << " transpose " << transpose_a << " conjugate " << conjugate_a << " left " << left);
          const Array tri = lower ? tril(raw) : triu(raw);
          Array op_a = transpose_a ? mT(tri) : tri;
          if (conjugate_a) op_a = conj(op_a);
          const Array b = left ? b_left : b_right;
          auto solve = [&](const Array& a_, const Array& b_) {
            return detail::bind1(ir::Op::triangular_solve, {a_, b_},
                                 {{"left_side", int64_t{left}},
                                  {"lower", int64_t{lower}},
                                  {"transpose_a", int64_t{transpose_a}},
                                  {"conjugate_a", int64_t{conjugate_a}},
                                  {"unit_diagonal", int64_t{0}}},
                                 std::source_location::current());
          };
          const Array x = solve(raw, b);
          CHECK(cdiff(left ? matmul(op_a, x) : matmul(x, op_a), b) < 1e-12);
          check_complex_derivatives(solve, raw, b);
        }
}

TEST_CASE("linalg: complex derivatives are JAX's", "[linalg][complex]") {
  const JaxValues ref;
  const Array z = z3(), b = b32(), wt = w3();
  auto g = [](auto f, const Array& x) { return grad(f)(x); };
  // jax.grad(lambda z: real(sum(cholesky(H(z)) * W)))
  CHECK(cdiff(g([&](const Array& x) { return real(sum(linalg::cholesky(hermitian(x)) * wt)); }, z), ref.g_chol_re,
              ref.g_chol_im) < 1e-12);
  // jax.grad(lambda z: sum(abs(solve(z, B))**2))
  CHECK(cdiff(g([&](const Array& x) { return sum(square(abs(linalg::solve(x, b)))); }, z), ref.g_solve_re,
              ref.g_solve_im) < 1e-12);
  const Array weights = array<double>({1.0, 2.0, 3.0});
  CHECK(cdiff(g([&](const Array& x) { return sum(linalg::eigvalsh(hermitian(x)) * weights); }, z), ref.g_eigvalsh_re,
              ref.g_eigvalsh_im) < 1e-12);
  // An eigenvector's derivative, through |v|^2 (independent of its phase).
  CHECK(cdiff(g(
                  [&](const Array& x) {
                    const Array v = linalg::eigh(hermitian(x)).second;
                    return sum(square(abs(slice(v, {0, 0}, {1, 3}))) * weights);
                  },
                  z),
              ref.g_eighv_re, ref.g_eighv_im) < 1e-11);
  CHECK(cdiff(g([&](const Array& x) { return sum(linalg::svdvals(x) * weights); }, z), ref.g_svals_re, ref.g_svals_im) <
        1e-12);
  CHECK(cdiff(g(
                  [&](const Array& x) {
                    const auto [u, s, vh] = linalg::svd(x, false);
                    const Array uv = slice(u, {0, 0}, {3, 1}) * mT(conj(slice(vh, {0, 0}, {1, 3})));
                    return sum(square(abs(reshape(uv, {3}))) * weights) + sum(s);
                  },
                  z),
              ref.g_svd_re, ref.g_svd_im) < 1e-11);
  CHECK(cdiff(g(
                  [&](const Array& x) {
                    const auto [q, r] = linalg::qr(x);
                    return real(sum(q * wt)) + real(sum(r * conj(wt)));
                  },
                  z),
              ref.g_qr_re, ref.g_qr_im) < 1e-12);
  CHECK(cdiff(g([](const Array& x) { return linalg::slogdet(x).second; }, z), ref.g_logdet_re, ref.g_logdet_im) <
        1e-12);
  CHECK(cdiff(g([](const Array& x) { return imag(linalg::slogdet(x).first); }, z), ref.g_sign_re, ref.g_sign_im) <
        1e-12);
  const Array c = cz({0.3}, {-0.8}, {});
  CHECK(cdiff(g([&](const Array& x) { return real(linalg::det(x) * c); }, z), ref.g_det_re, ref.g_det_im) < 1e-12);
  const Array w0 = slice(wt, {0, 0}, {1, 3});
  auto eigvals_loss = [&](const Array& x) { return real(sum(square(linalg::eigvals(x)) * reshape(w0, {3}))); };
  CHECK(max_abs_diff(g(eigvals_loss, r3()), array<double>(ref.g_eigvalsR, {3, 3})) < 1e-12);
  CHECK(cdiff(g(eigvals_loss, z), ref.g_eigvalsZ_re, ref.g_eigvalsZ_im) < 1e-12);
  CHECK(cdiff(g([&](const Array& x) { return real(sum(linalg::pinv(x) * wt)); }, z), ref.g_pinv_re, ref.g_pinv_im) <
        1e-11);
  // solve_triangular(l, b, lower=True, trans=2): both arguments.
  const Array l = cz(ref.chol_re, ref.chol_im, {3, 3});
  const auto [ga, gb] = grad<0, 1>(
      [](const Array& a, const Array& x) { return sum(square(abs(linalg::solve_triangular(a, x, true, 2)))); })(l, b);
  CHECK(cdiff(tril(ga), ref.g_tri2_a_re, ref.g_tri2_a_im) < 1e-12);
  CHECK(cdiff(gb, ref.g_tri2_b_re, ref.g_tri2_b_im) < 1e-12);
}

TEST_CASE("linalg: eig under vmap and jit, its eigenvectors' derivative is refused, as JAX's", "[linalg][complex]") {
  const Array batch = random::normal(random::key(31), {4, 5, 5}, DType::f64);
  const Array w = vmap([](const Array& m) { return linalg::eigvals(m); })(batch);
  for (int64_t i = 0; i < 4; ++i) {
    const Array one = linalg::eigvals(reshape(slice(batch, {i, 0, 0}, {i + 1, 5, 5}), {5, 5}));
    CHECK(cdiff(reshape(slice(w, {i, 0}, {i + 1, 5}), {5}), one) == 0);
  }
  auto both = [](const Array& m) {
    const auto [ew, ev] = linalg::eig(m);
    return matmul(astype(m, ev.dtype()), ev) - ev * expand_dims(ew, -2);
  };
  CHECK(max_abs_diff(abs(jit(both, JitOptions{.backend = Backend::cpu})(batch)), zeros({4, 5, 5}, DType::f64)) < 1e-12);
  CHECK(cdiff(jit([](const Array& m) { return linalg::eigvals(m); })(batch), linalg::eigvals(batch)) == 0);
  // Through eig's w the rule refuses (the node computes the vectors); eigvals' w is differentiable.
  CHECK_THROWS_AS(grad([](const Array& m) { return real(sum(linalg::eig(m).first)); })(batch), UnsupportedError);
  const Array g = grad([](const Array& m) { return real(sum(linalg::eigvals(m))); })(batch);
  // d trace(a) = I: the sum of the eigenvalues is the trace.
  CHECK(max_abs_diff(g, broadcast_to(eye(5, DType::f64), {4, 5, 5})) < 1e-12);
  // Eigenvalues apart (a diagonal 0, 3, ..., 12 added), so finite differences are accurate. First
  // order only: the rule computes eigenvectors, whose derivative is refused, as in JAX.
  const Array apart = slice(batch, {0, 0, 0}, {1, 5, 5}) + diag(arange(5, DType::f64) * 3.0);
  CHECK_NOTHROW(
      testing::check_grads([](const Array& m) { return real(linalg::eigvals(m)); }, std::make_tuple(apart), 1));
  CHECK_NOTHROW(
      testing::check_grads([](const Array& m) { return imag(linalg::eigvals(m)); }, std::make_tuple(apart), 1));
}

TEST_CASE("linalg: f16 and bf16 are refused as JAX refuses them, with the op and dtype named", "[linalg][complex]") {
  for (DType dt : {DType::f16, DType::bf16}) {
    const Array a = astype(eye(3, DType::f32) * 2.0, dt);
    CHECK_THROWS_AS(linalg::cholesky(a), DTypeError);
    CHECK_THROWS_WITH(linalg::eigvals(a), Catch::Contains("eig") && Catch::Contains(dtype_name(dt)));
    CHECK_THROWS_AS(linalg::svd(a), DTypeError);
    CHECK_THROWS_AS(linalg::solve(a, a), DTypeError);
  }
}

TEST_CASE("linalg: eig of a matrix holding NaN or infinity is NaN, as JAX's, without LAPACK's complaint",
          "[linalg][complex]") {
  // geev's balancing refuses such a matrix (printing through xerbla); the kernel never calls it then.
  const Array nan_matrix = array<float>({1, std::nanf(""), 3, 4}, {2, 2});
  const Array inf_matrix = array<double>({1, 2, 3, std::numeric_limits<double>::infinity()}, {2, 2});
  for (const Array& a : {nan_matrix, inf_matrix}) {
    const auto [w, v] = linalg::eig(a);
    for (double x : astype(real(w), DType::f64).to_vector<double>()) CHECK(std::isnan(x));
    for (double x : astype(imag(v), DType::f64).to_vector<double>()) CHECK(std::isnan(x));
  }
  // A finite matrix in the same batch is unaffected.
  const Array batch = stack({astype(nan_matrix, DType::f64), array<double>({2, 0, 0, 3}, {2, 2})});
  const std::vector<double> w = astype(real(linalg::eigvals(batch)), DType::f64).to_vector<double>();
  CHECK(std::isnan(w[0]));
  CHECK(((w[2] == 2 && w[3] == 3) || (w[2] == 3 && w[3] == 2)));
}
