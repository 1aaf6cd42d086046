#include "services/alignment/common_names.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "services/alignment/text_normalize.h"

namespace ibgraphrag::alignment {

const std::vector<CommonNameRow>& ClinicalCommonNames() {
  static const auto* const rows = new std::vector<CommonNameRow>{
      // ---- Drugs: US (USAN) / British (BAN) / international (INN) name pairs, where the KG
      // carries only one of them.
      {"DrugBank:DB00945", "Acetylsalicylic acid", {"aspirin", "acetylsalicylate"}},
      {"DrugBank:DB00316", "Acetaminophen", {"paracetamol", "Tylenol", "Panadol", "APAP"}},
      {"DrugBank:DB00668", "Epinephrine", {"adrenaline", "EpiPen"}},
      {"DrugBank:DB00368", "Norepinephrine", {"noradrenaline"}},
      {"DrugBank:DB01001", "Salbutamol", {"albuterol", "Ventolin", "ProAir"}},
      {"DrugBank:DB00695", "Furosemide", {"frusemide", "Lasix"}},
      {"DrugBank:DB01016", "Glyburide", {"glibenclamide"}},
      {"DrugBank:DB00281", "Lidocaine", {"lignocaine", "Xylocaine"}},
      {"DrugBank:DB00454", "Pethidine", {"meperidine", "Demerol"}},
      {"DrugBank:DB00091", "Cyclosporine", {"ciclosporin", "cyclosporin", "Neoral", "Sandimmune"}},
      {"DrugBank:DB01045", "Rifampicin", {"rifampin"}},
      {"DrugBank:DB00787", "Aciclovir", {"acyclovir", "Zovirax"}},
      {"DrugBank:DB01060", "Amoxicillin", {"amoxycillin"}},
      {"DrugBank:DB00567", "Cephalexin", {"cefalexin", "Keflex"}},
      {"DrugBank:DB00436", "Bendroflumethiazide", {"bendrofluazide"}},
      {"DrugBank:DB00451", "Levothyroxine", {"Synthroid"}},
      {"DrugBank:DB00313",
       "Valproic Acid",
       {"valproate", "sodium valproate", "divalproex", "Depakote"}},
      {"DrugBank:DB00115", "Cyanocobalamin", {"vitamin B12", "cobalamin"}},
      {"DrugBank:DB00126", "Vitamin C", {"ascorbic acid"}},
      {"DrugBank:DB00169", "Cholecalciferol", {"colecalciferol", "vitamin D3"}},
      {"DrugBank:DB01022", "Phylloquinone", {"phytonadione", "phytomenadione", "vitamin K1"}},
      {"DrugBank:DB00152", "Thiamine", {"thiamin", "vitamin B1"}},
      {"DrugBank:DB00158", "Folic acid", {"vitamin B9"}},
      {"DrugBank:DB00727", "Nitroglycerin", {"glyceryl trinitrate", "nitroglycerine", "GTN"}},
      {"DrugBank:DB01064", "Isoprenaline", {"isoproterenol"}},
      {"DrugBank:DB01114", "Chlorphenamine", {"chlorpheniramine"}},
      {"DrugBank:DB00783", "Estradiol", {"oestradiol"}},
      {"DrugBank:DB00977", "Ethinyl Estradiol", {"ethinylestradiol", "ethinyloestradiol"}},
      {"DrugBank:DB01174", "Phenobarbital", {"phenobarbitone"}},
      {"DrugBank:DB01235", "L-DOPA", {"levodopa"}},
      {"DrugBank:DB00202", "Succinylcholine", {"suxamethonium"}},
      {"DrugBank:DB00332", "Ipratropium bromide", {"ipratropium", "Atrovent"}},
      {"DrugBank:DB00244", "Mesalazine", {"mesalamine"}},
      {"DrugBank:DB01003",
       "Cromoglicic acid",
       {"cromolyn", "sodium cromoglicate", "sodium cromoglycate"}},
      {"DrugBank:DB01432", "Cholestyramine", {"colestyramine"}},
      {"DrugBank:DB00399", "Zoledronate", {"zoledronic acid"}},
      {"DrugBank:DB00630", "Alendronate", {"alendronic acid", "Fosamax"}},
      {"DrugBank:DB00746", "Deferoxamine", {"desferrioxamine"}},
      {"DrugBank:DB06151", "Acetylcysteine", {"N-acetylcysteine"}},
      {"DrugBank:DB00627", "Niacin", {"vitamin B3"}},
      {"DrugBank:DB00162", "Vitamin A", {"retinol"}},
      {"DrugBank:DB00163", "Vitamin E", {"alpha-tocopherol", "tocopherol"}},
      {"DrugBank:DB01356", "Lithium", {"lithium carbonate"}},
      // ---- Drugs: the best-known brand names.
      {"DrugBank:DB01076", "Atorvastatin", {"Lipitor"}},
      {"DrugBank:DB00641", "Simvastatin", {"Zocor"}},
      {"DrugBank:DB01098", "Rosuvastatin", {"Crestor"}},
      {"DrugBank:DB01050", "Ibuprofen", {"Advil", "Motrin", "Nurofen"}},
      {"DrugBank:DB00682", "Warfarin", {"Coumadin"}},
      {"DrugBank:DB00472", "Fluoxetine", {"Prozac"}},
      {"DrugBank:DB01104", "Sertraline", {"Zoloft"}},
      {"DrugBank:DB00331", "Metformin", {"Glucophage"}},
      {"DrugBank:DB00758", "Clopidogrel", {"Plavix"}},
      {"DrugBank:DB00203", "Sildenafil", {"Viagra"}},
      {"DrugBank:DB00404", "Alprazolam", {"Xanax"}},
      {"DrugBank:DB00829", "Diazepam", {"Valium"}},
      {"DrugBank:DB00736", "Esomeprazole", {"Nexium"}},
      {"DrugBank:DB00338", "Omeprazole", {"Prilosec", "Losec"}},
      {"DrugBank:DB00381", "Amlodipine", {"Norvasc"}},
      {"DrugBank:DB00722", "Lisinopril", {"Zestril", "Prinivil"}},
      {"DrugBank:DB00051", "Adalimumab", {"Humira"}},
      {"DrugBank:DB00065", "Infliximab", {"Remicade"}},
      {"DrugBank:DB00005", "Etanercept", {"Enbrel"}},
      {"DrugBank:DB00073", "Rituximab", {"Rituxan", "MabThera"}},
      {"DrugBank:DB00619", "Imatinib", {"Gleevec", "Glivec"}},
      {"DrugBank:DB00072", "Trastuzumab", {"Herceptin"}},
      {"DrugBank:DB00675", "Tamoxifen", {"Nolvadex"}},
      {"DrugBank:DB00047", "Insulin glargine", {"Lantus"}},
      {"DrugBank:DB01261", "Sitagliptin", {"Januvia"}},
      {"DrugBank:DB06655", "Liraglutide", {"Victoza"}},
      {"DrugBank:DB00471", "Montelukast", {"Singulair"}},
      {"DrugBank:DB00734", "Risperidone", {"Risperdal"}},
      {"DrugBank:DB00334", "Olanzapine", {"Zyprexa"}},
      {"DrugBank:DB01224", "Quetiapine", {"Seroquel"}},
      {"DrugBank:DB00996", "Gabapentin", {"Neurontin"}},
      {"DrugBank:DB00230", "Pregabalin", {"Lyrica"}},
      {"DrugBank:DB00193", "Tramadol", {"Ultram"}},
      {"DrugBank:DB00198", "Oseltamivir", {"Tamiflu"}},
      {"DrugBank:DB00252", "Phenytoin", {"Dilantin"}},
      {"DrugBank:DB00564", "Carbamazepine", {"Tegretol"}},
      {"DrugBank:DB00555", "Lamotrigine", {"Lamictal"}},
      {"DrugBank:DB01202", "Levetiracetam", {"Keppra"}},
      {"DrugBank:DB00390", "Digoxin", {"Lanoxin"}},
      {"DrugBank:DB01118", "Amiodarone", {"Cordarone"}},
      {"DrugBank:DB00843", "Donepezil", {"Aricept"}},
      // ---- Drug classes: the everyday names, on the FDA established pharmacologic class
      // (NDF-RT) where the KG has one, else the MeSH class.
      {"NDFRT:N0000175589", "HMG-CoA Reductase Inhibitor", {"statin", "statins"}},
      {"NDFRT:N0000175562",
       "Angiotensin Converting Enzyme Inhibitor",
       {"ACE inhibitor", "ACE inhibitors", "ACEI", "ACEIs",
        "angiotensin-converting enzyme "
        "inhibitors"}},
      {"NDFRT:N0000175561",
       "Angiotensin 2 Receptor Blocker",
       {"angiotensin receptor blocker", "angiotensin receptor blockers",
        "angiotensin II receptor blocker", "angiotensin II receptor blockers", "ARB", "ARBs",
        "sartans"}},
      {"NDFRT:N0000175556",
       "beta-Adrenergic Blocker",
       {"beta blocker", "beta blockers", "beta-blocker", "beta-blockers"}},
      {"NDFRT:N0000175696",
       "Serotonin Reuptake Inhibitor",
       {"selective serotonin reuptake inhibitor", "selective serotonin reuptake inhibitors", "SSRI",
        "SSRIs"}},
      {"NDFRT:N0000175749",
       "Serotonin and Norepinephrine Reuptake Inhibitor",
       {"serotonin-norepinephrine reuptake inhibitor",
        "serotonin-norepinephrine reuptake "
        "inhibitors",
        "SNRI", "SNRIs"}},
      {"NDFRT:N0000175722",
       "Nonsteroidal Anti-inflammatory Drug",
       {"NSAID", "NSAIDs", "nonsteroidal anti-inflammatory drugs",
        "non-steroidal anti-inflammatory drugs", "non-steroidal anti-inflammatory drug"}},
      {"NDFRT:N0000175525", "Proton Pump Inhibitor", {"PPIs"}},
      {"NDFRT:N0000175566",
       "Calcium Channel Blocker",
       {"calcium antagonist", "calcium antagonists", "CCB", "CCBs"}},
      {"NDFRT:N0000175419", "Thiazide Diuretic", {"thiazide diuretics"}},
      {"NDFRT:N0000175590", "Loop Diuretic", {"loop diuretics"}},
      {"NDFRT:N0000175418", "Potassium-sparing Diuretic", {"potassium-sparing diuretics"}},
      {"NDFRT:N0000175608", "Sulfonylurea", {"sulfonylureas", "sulphonylurea", "sulphonylureas"}},
      {"NDFRT:N0000175913",
       "Dipeptidyl Peptidase 4 Inhibitor",
       {"DPP-4 inhibitor", "DPP-4 inhibitors", "DPP4 inhibitor", "DPP4 inhibitors", "gliptins"}},
      {"NDFRT:N0000187059",
       "Sodium-Glucose Cotransporter 2 Inhibitor",
       {"SGLT2 inhibitor", "SGLT2 inhibitors", "SGLT-2 inhibitors", "gliflozins"}},
      {"NDFRT:N0000180190", "Thiazolidinedione", {"glitazones"}},
      {"NDFRT:N0000175752",
       "Tricyclic Antidepressant",
       {"tricyclic antidepressants", "tricyclics", "TCA", "TCAs"}},
      {"NDFRT:N0000175744",
       "Monoamine Oxidase Inhibitor",
       {"MAOI", "MAOIs", "MAO inhibitor", "MAO inhibitors"}},
      {"NDFRT:N0000175605",
       "Kinase Inhibitor",
       {"kinase inhibitors", "tyrosine kinase inhibitor", "tyrosine kinase inhibitors", "TKI",
        "TKIs"}},
      {"NDFRT:N0000000190",
       "Histamine H1 Receptor Antagonists",
       {"antihistamine", "antihistamines", "H1 blockers", "H1 antihistamines"}},
      {"NDFRT:N0000000151",
       "Histamine H2 Receptor Antagonists",
       {"H2 blocker", "H2 blockers", "H2 antagonists", "H2 receptor antagonists"}},
      {"NDFRT:N0000175690", "Opioid Agonist", {"opioid", "opioids", "opiates"}},
      {"MESH:D000701", "Analgesics, Opioid", {"opioid analgesics", "narcotic analgesics"}},
      {"MESH:D014150",
       "Antipsychotic Agents",
       {"antipsychotic", "antipsychotics", "antipsychotic drugs", "neuroleptics"}},
      {"NDFRT:N0000175430",
       "Atypical Antipsychotic",
       {"atypical antipsychotics", "second-generation antipsychotics"}},
      {"NDFRT:N0000180182",
       "Typical Antipsychotic",
       {"typical antipsychotics", "first-generation antipsychotics"}},
      {"MESH:D000927",
       "Anticonvulsants",
       {"antiepileptic", "antiepileptics", "antiepileptic drugs", "anti-seizure medications",
        "AEDs"}},
      {"MESH:D000928", "Antidepressive Agents", {"antidepressant", "antidepressants"}},
      {"MESH:D000900", "Anti-Bacterial Agents", {"antibiotic", "antibiotics", "antibacterials"}},
      {"MESH:D000998",
       "Antiviral Agents",
       {"antiviral", "antivirals", "antiviral drugs", "antiviral medications"}},
      {"MESH:D000959",
       "Antihypertensive Agents",
       {"antihypertensive", "antihypertensives", "antihypertensive drugs",
        "blood pressure medications"}},
      {"NDFRT:N0000175937", "Quinolone Antimicrobial", {"fluoroquinolone", "fluoroquinolones"}},
      {"NDFRT:N0000175579", "Bisphosphonate", {"bisphosphonates"}},
      {"NDFRT:N0000175576", "Corticosteroid", {"corticosteroids"}},
      {"NDFRT:N0000175476",
       "Vitamin K Antagonist",
       {"vitamin K antagonists", "VKA", "VKAs", "coumarins"}},
      {"NDFRT:N0000175637", "Factor Xa Inhibitor", {"factor Xa inhibitors", "xabans"}},
      {"MESH:D000925", "Anticoagulants", {"blood thinners"}},
      {"MESH:D010975",
       "Platelet Aggregation Inhibitors",
       {"antiplatelet drugs", "antiplatelet agents", "antiplatelets"}},
      {"NDFRT:N0000182142", "P2Y12 Platelet Inhibitor", {"P2Y12 inhibitor", "P2Y12 inhibitors"}},
      {"NDFRT:N0000175723",
       "Cholinesterase Inhibitor",
       {"acetylcholinesterase inhibitors", "AChE inhibitors", "anticholinesterases"}},
      {"NDFRT:N0000175694", "Benzodiazepine", {"benzos"}},
      {"NDFRT:N0000175777", "Leukotriene Receptor Antagonist", {"LTRA", "LTRAs"}},
      {"MESH:D052246",
       "Cyclooxygenase 2 Inhibitors",
       {"COX-2 inhibitor", "COX-2 inhibitors", "coxib", "coxibs"}},
      {"DrugBank:DB00030", "Insulin Regular", {"insulin", "regular insulin", "human insulin"}},
      // ---- Diseases: the everyday names the Disease Ontology and HPO do not list ("high
      // cholesterol": DO's hypercholesterolemia is obsolete, so HPO's phenotype).
      {"DOID:10923", "sickle cell anemia", {"sickle cell disease", "sickle-cell disease"}},
      {"DOID:10763", "hypertension", {"high blood pressure"}},
      {"DOID:3083", "chronic obstructive pulmonary disease", {"COPD"}},
      {"HP:0003124", "Hypercholesterolemia", {"high cholesterol", "high blood cholesterol"}},
      {"DOID:526",
       "human immunodeficiency virus infectious disease",
       {"HIV", "HIV infection", "HIV disease"}},
      {"DOID:635", "acquired immunodeficiency syndrome", {"AIDS"}},
      // "Angina" alone is how clinicians say it; DO has no angina pectoris, HPO's phenotype is the
      // node SIDER's indications name.
      {"HP:0001681", "Angina pectoris", {"angina"}},
      // DO lists "type I diabetes mellitus" but not the Arabic numeral without "mellitus" (it does
      // for type 2).
      {"DOID:9744", "type 1 diabetes mellitus", {"type 1 diabetes", "juvenile diabetes"}},
      {"DOID:8659", "chickenpox", {"chicken pox"}},
      {"DOID:9256", "colorectal cancer", {"bowel cancer"}},
      // ---- Genes: the protein (or enzyme, receptor) names clinicians use for the gene, which the
      // KG names only by its HGNC symbol ("Which drugs inhibit HMG-CoA reductase?": HMGCR).
      {"Entrez:3630", "INS", {"insulin gene", "proinsulin", "preproinsulin"}},
      {"Entrez:3156",
       "HMGCR",
       {"HMG-CoA reductase", "HMG CoA reductase", "3-hydroxy-3-methylglutaryl-CoA reductase"}},
      {"Entrez:1756", "DMD", {"dystrophin"}},
      {"Entrez:2200", "FBN1", {"fibrillin-1", "fibrillin 1", "fibrillin"}},
      {"Entrez:3064", "HTT", {"huntingtin"}},
      {"Entrez:1636", "ACE", {"angiotensin-converting enzyme", "angiotensin converting enzyme"}},
      {"Entrez:5742", "PTGS1", {"cyclooxygenase-1", "cyclooxygenase 1", "COX-1"}},
      {"Entrez:5743", "PTGS2", {"cyclooxygenase-2", "cyclooxygenase 2", "COX-2"}},
      {"Entrez:79001", "VKORC1", {"vitamin K epoxide reductase", "VKOR"}},
      {"Entrez:153",
       "ADRB1",
       {"beta-1 adrenergic receptor", "beta1 adrenergic receptor", "beta-1 receptor"}},
      {"Entrez:154",
       "ADRB2",
       {"beta-2 adrenergic receptor", "beta2 adrenergic receptor", "beta-2 receptor"}},
      {"Entrez:1813", "DRD2", {"dopamine D2 receptor", "D2 receptor"}},
      {"Entrez:495",
       "ATP4A",
       {"proton pump", "gastric proton pump", "H+/K+ ATPase", "hydrogen potassium ATPase"}},
      {"Entrez:7498", "XDH", {"xanthine oxidase"}},
      {"Entrez:1956", "EGFR", {"epidermal growth factor receptor"}},
      {"Entrez:2064", "ERBB2", {"HER2", "HER2/neu"}},
      {"Entrez:25", "ABL1", {"BCR-ABL", "ABL kinase"}},
      {"Entrez:7124",
       "TNF",
       {"tumor necrosis factor", "tumour necrosis factor", "TNF-alpha", "TNF alpha"}},
      {"Entrez:1080", "CFTR", {"cystic fibrosis transmembrane conductance regulator"}},
      {"Entrez:3043", "HBB", {"beta-globin", "hemoglobin beta", "haemoglobin beta"}},
      {"Entrez:3039", "HBA1", {"alpha-globin"}},
      {"Entrez:2157", "F8", {"factor VIII", "factor 8"}},
      {"Entrez:2158", "F9", {"factor IX", "factor 9"}},
      {"Entrez:2147", "F2", {"prothrombin", "factor II"}},
      {"Entrez:2159", "F10", {"factor Xa"}},  // not "factor X": "risk factor X"
      {"Entrez:185",
       "AGTR1",
       {"angiotensin II receptor", "angiotensin II type 1 receptor", "AT1 receptor"}},
      {"Entrez:43", "ACHE", {"acetylcholinesterase"}},
      {"Entrez:4128", "MAOA", {"monoamine oxidase A"}},
      {"Entrez:4129", "MAOB", {"monoamine oxidase B"}},
      {"Entrez:6532", "SLC6A4", {"serotonin transporter", "SERT"}},
      {"Entrez:1803", "DPP4", {"dipeptidyl peptidase-4", "dipeptidyl peptidase 4", "DPP-4"}},
      {"Entrez:6524", "SLC5A2", {"sodium-glucose cotransporter 2", "SGLT2", "SGLT-2"}},
      {"Entrez:2740", "GLP1R", {"GLP-1 receptor", "glucagon-like peptide-1 receptor"}},
      {"Entrez:7157", "TP53", {"p53"}},
      {"Entrez:6716", "SRD5A2", {"5-alpha reductase", "5-alpha-reductase", "5-alpha reductase 2"}},
      {"Entrez:6715", "SRD5A1", {"5-alpha reductase 1"}},
      {"Entrez:2908", "NR3C1", {"glucocorticoid receptor"}},
      {"Entrez:2099",
       "ESR1",
       {"estrogen receptor", "oestrogen receptor", "estrogen receptor alpha"}},
      {"Entrez:367", "AR", {"androgen receptor"}},
      {"Entrez:1588", "CYP19A1", {"aromatase"}},
      {"Entrez:7173", "TPO", {"thyroid peroxidase"}},
      {"Entrez:1719", "DHFR", {"dihydrofolate reductase"}},
      {"Entrez:7298", "TYMS", {"thymidylate synthase"}},
      {"Entrez:7153", "TOP2A", {"topoisomerase II", "topoisomerase 2"}},
      {"Entrez:7422", "VEGFA", {"VEGF", "vascular endothelial growth factor"}},
      {"Entrez:5133", "PDCD1", {"PD-1", "programmed cell death protein 1"}},
      {"Entrez:1493", "CTLA4", {"CTLA-4"}},
      {"Entrez:931", "MS4A1", {"CD20"}},
      {"Entrez:3949", "LDLR", {"LDL receptor", "low-density lipoprotein receptor"}},
      {"Entrez:64805", "P2RY12", {"P2Y12 receptor"}},
      {"Entrez:3356", "HTR2A", {"5-HT2A receptor", "serotonin 2A receptor"}},
      {"Entrez:4988", "OPRM1", {"mu opioid receptor", "mu-opioid receptor"}},
      {"Entrez:5468", "PPARG", {"PPAR-gamma", "PPAR gamma"}},
      {"Entrez:3717", "JAK2", {"Janus kinase 2"}},
      {"Entrez:760", "CA2", {"carbonic anhydrase", "carbonic anhydrase II"}},
      {"Entrez:476",
       "ATP1A1",
       {"Na+/K+ ATPase", "sodium-potassium ATPase", "sodium potassium pump"}},
      {"Entrez:2645", "GCK", {"glucokinase"}},
      {"Entrez:6557", "SLC12A1", {"NKCC2", "Na-K-2Cl cotransporter"}},
      {"Entrez:6559",
       "SLC12A3",
       {"sodium chloride cotransporter", "thiazide-sensitive cotransporter"}},
      {"Entrez:8654", "PDE5A", {"phosphodiesterase 5", "phosphodiesterase type 5", "PDE5"}},
      {"Entrez:3269", "HRH1", {"histamine H1 receptor", "H1 receptor"}},
      {"Entrez:3274", "HRH2", {"histamine H2 receptor", "H2 receptor"}},
      {"Entrez:7253", "TSHR", {"TSH receptor", "thyrotropin receptor"}},
      {"Entrez:7038", "TG", {"thyroglobulin"}},
      {"Entrez:6606", "SMN1", {"survival motor neuron 1"}},
      {"Entrez:5053", "PAH", {"phenylalanine hydroxylase"}},
      {"Entrez:3073", "HEXA", {"hexosaminidase A", "beta-hexosaminidase A"}},
      {"Entrez:2629", "GBA", {"glucocerebrosidase", "beta-glucocerebrosidase"}},
      {"Entrez:4000", "LMNA", {"lamin A/C", "lamin A"}},
      {"Entrez:6647", "SOD1", {"superoxide dismutase 1"}},
      {"Entrez:351", "APP", {"amyloid precursor protein"}},
      {"Entrez:5663", "PSEN1", {"presenilin 1", "presenilin-1"}},
      {"Entrez:2539", "G6PD", {"glucose-6-phosphate dehydrogenase"}},
  };
  return *rows;
}

std::string CommonNamesTableTag(const std::vector<CommonNameRow>& rows) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a, 64-bit
  auto add = [&hash](absl::string_view text) {
    for (const char c : text) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 1099511628211ull;
    }
    hash ^= 0xff;  // a separator no name contains
    hash *= 1099511628211ull;
  };
  for (const CommonNameRow& row : rows) {
    add(row.external_id);
    add(row.kg_name);
    for (const char* name : row.names) add(name);
  }
  return absl::StrCat("table-", absl::Hex(hash, absl::kZeroPad16));
}

CommonNamesReport AddCommonNames(const std::vector<CommonNameRow>& rows, Lexicon* lexicon) {
  CommonNamesReport report;
  absl::flat_hash_map<std::string, size_t> by_id;
  by_id.reserve(lexicon->entries.size());
  for (size_t i = 0; i < lexicon->entries.size(); ++i) {
    by_id.emplace(lexicon->entries[i].external_id, i);
  }
  for (const CommonNameRow& row : rows) {
    ++report.rows;
    const auto it = by_id.find(row.external_id);
    if (it == by_id.end() ||
        !absl::EqualsIgnoreCase(lexicon->entries[it->second].name, row.kg_name)) {
      report.unmatched.push_back(absl::StrCat(row.external_id, " (", row.kg_name, ")"));
      continue;
    }
    ++report.rows_matched;
    LexiconEntry& entry = lexicon->entries[it->second];
    for (const char* name : row.names) {
      if (entry.HasName(name)) continue;
      if (IsAbbreviationLike(name)) {
        entry.abbreviations.emplace_back(name);
        ++report.abbreviations_added;
      } else {
        entry.synonyms.emplace_back(name);
        ++report.synonyms_added;
      }
    }
  }
  absl::StrAppend(&lexicon->source, " + common-names:", report.rows_matched, " ",
                  CommonNamesTableTag(rows));
  return report;
}

}  // namespace ibgraphrag::alignment
