// Intl and the toLocaleString family as Node formats en-US: numbers, currencies, dates, time zones, sorting.
const when = new Date(Date.UTC(2026, 11, 5, 16, 7, 9, 45));
const nf = (options, n) => new Intl.NumberFormat('en-US', options).format(n);
const lines = [
  (1234567.891).toLocaleString(), (-1234.5).toLocaleString('en-US'), (1.005).toLocaleString('en-US', { maximumFractionDigits: 2 }),
  nf({ style: 'currency', currency: 'USD' }, 1234.5), nf({ style: 'currency', currency: 'EUR' }, -9.99),
  nf({ style: 'currency', currency: 'JPY' }, 123456.7), nf({ style: 'currency', currency: 'USD', currencySign: 'accounting' }, -12),
  nf({ style: 'currency', currency: 'GBP', currencyDisplay: 'name' }, 2), Intl.NumberFormat('en-US', { style: 'percent' }).format(0.256),
  nf({ minimumFractionDigits: 2 }, 5), nf({ maximumSignificantDigits: 3 }, 123456), nf({ notation: 'compact' }, 1234),
  nf({ notation: 'compact' }, 999999), nf({ notation: 'compact', compactDisplay: 'long' }, 2.4e9), nf({ notation: 'scientific' }, 123456),
  nf({ signDisplay: 'always' }, 5), nf({ style: 'unit', unit: 'kilometer-per-hour' }, 50), nf({ style: 'unit', unit: 'day', unitDisplay: 'long' }, 3),
  (12345678901234567890n).toLocaleString(), JSON.stringify(new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).formatToParts(-1.5)),
  when.toLocaleString(), when.toLocaleDateString(), when.toLocaleTimeString(),
  when.toLocaleDateString('en-US', { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' }),
  when.toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short' }), when.toLocaleString('en-US', { dateStyle: 'long', timeStyle: 'short' }),
  when.toLocaleTimeString('en-US', { hour: '2-digit', minute: '2-digit' }), when.toLocaleTimeString('en-US', { hour12: false }),
  when.toLocaleDateString('en-US', { year: '2-digit', month: '2-digit', day: '2-digit' }), new Intl.DateTimeFormat().resolvedOptions().timeZone,
  when.toLocaleString('en-US', { timeZone: 'America/New_York', timeZoneName: 'short' }),
  new Date(Date.UTC(2026, 6, 1, 12)).toLocaleString('en-US', { timeZone: 'Europe/Paris' }),
  when.toLocaleTimeString('en-US', { timeZone: 'Asia/Kolkata' }),
  ['banana', 'Apple', 'apple', 'éclair', 'Eclair', 'zebra', 'Zoë', 'zoe', 'item10', 'item2', 'a-b', 'ab', 'ß', 'st'].sort((a, b) => a.localeCompare(b)).join(' '),
  ['file10.txt', 'file2.txt', 'File1.txt'].sort(new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' }).compare).join(' '),
  'a'.localeCompare('A', undefined, { sensitivity: 'base' }), 'resume'.localeCompare('résumé', 'en', { sensitivity: 'accent' }),
  [1, 2, 3, 11, 22, 103].map((n) => n + ({ one: 'st', two: 'nd', few: 'rd', other: 'th' })[new Intl.PluralRules('en-US', { type: 'ordinal' }).select(n)]).join(' '),
  new Intl.ListFormat('en', { style: 'long', type: 'conjunction' }).format(['Ann', 'Bob', 'Cy']),
  new Intl.ListFormat('en', { type: 'disjunction' }).format(['tea', 'coffee']),
  new Intl.RelativeTimeFormat('en', { numeric: 'auto' }).format(-1, 'day'), new Intl.RelativeTimeFormat('en').format(3, 'hours'),
  new Intl.RelativeTimeFormat('en', { style: 'short' }).format(-2, 'month'),
];
for (const line of lines) console.log(line);
