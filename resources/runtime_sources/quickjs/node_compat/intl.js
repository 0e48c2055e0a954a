/* Intl in English, formatted as Node formats 'en-US' (node_compat/core.js makes it on first use of Intl, of
   toLocaleString and its kin, or of localeCompare): NumberFormat, DateTimeFormat, Collator, PluralRules,
   ListFormat and RelativeTimeFormat. QuickJS has no Intl: programs failed on it, and its own toLocaleString
   ignored locale and options (1234567.891 printed unseparated) and localeCompare compared code points
   ('C' before 'a'). Another locale falls back to en-US, as the standard has it for a locale an
   implementation lacks (Node built with English only does the same; resolvedOptions().locale says en-US).
   Time zones: UTC only (the sandbox's clock is UTC; another zone is a RangeError, not a silent UTC time). */
(function (x) {
'use strict';
const { define } = x;
const LOCALE = 'en-US';
const NBSP = '\u00a0';

/* The locale tags asked for, checked as the standard checks them (each is then answered in English). */
function checkLocales(locales) {
  if (locales === undefined) return [];
  const list = typeof locales === 'string' ? [locales] : Array.from(Object(locales));
  for (const tag of list) {
    if (typeof tag !== 'string' && (typeof tag !== 'object' || tag === null)) throw new TypeError('Incorrect locale information provided');
    if (!/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/.test(String(tag))) throw new RangeError('Incorrect locale information provided');
  }
  return list;
}
function canonical(locales) {
  return checkLocales(locales).map((tag) => String(tag).split('-').map((p, i) => i === 0 ? p.toLowerCase() : p.length === 2 ? p.toUpperCase() : p.length === 4 ? p[0].toUpperCase() + p.slice(1).toLowerCase() : p.toLowerCase()).join('-'));
}
/* options[name] as a string, one of `allowed` (a RangeError naming the `kind` of formatter otherwise). */
function option(kind, options, name, allowed, fallback) {
  const v = options[name];
  if (v === undefined) return fallback;
  const s = String(v);
  if (!allowed.includes(s)) throw new RangeError(`Value ${s} out of range for Intl.${kind} options property ${name}`);
  return s;
}
function digitsOption(options, name, min, max, fallback) {
  const v = options[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!(n >= min && n <= max)) throw new RangeError(`${name} value is out of range.`);
  return Math.floor(n);
}
/* NumberFormat's and DateTimeFormat's format: bound to its formatter once read, as the standard has it
   (arr.map(nf.format) works), and made of the parts formatToParts gives. */
function boundFormat(formatter) {
  const format = (value) => formatter.formatToParts(value).map((p) => p.value).join('');
  define(formatter, 'format', format);
  return format;
}
const toOptions = (options) => options === undefined ? Object.create(null) : Object(options);
function statics(C) {
  define(C, 'supportedLocalesOf', function supportedLocalesOf(locales) { return canonical(locales); });
}

/* ---- numbers: decimal digits, rounded as ICU rounds them (the shortest decimal form of a double) ---- */
function decimal(value) {
  /* value -> { neg, ds, e }: |value| = ds * 10^e, ds a digit string without leading zeros ('' for 0) */
  if (typeof value === 'bigint') { const s = value < 0n ? (-value).toString() : value.toString(); return { neg: value < 0n, ds: s === '0' ? '' : s, e: 0 }; }
  const neg = value < 0 || Object.is(value, -0);
  let s = String(Math.abs(value)), e = 0;
  const at = s.indexOf('e');
  if (at >= 0) { e = Number(s.slice(at + 1)); s = s.slice(0, at); }
  const dot = s.indexOf('.');
  if (dot >= 0) { e -= s.length - dot - 1; s = s.slice(0, dot) + s.slice(dot + 1); }
  s = s.replace(/^0+/, '');
  while (s.endsWith('0')) { s = s.slice(0, -1); e++; }
  return { neg, ds: s, e };
}
function roundUp(mode, neg, dropped) {
  /* whether dropping `dropped` (the digits cut off, a string) rounds the magnitude up */
  if (!/[1-9]/.test(dropped)) return false;
  const half = dropped[0] > '5' || (dropped[0] === '5' && /[1-9]/.test(dropped.slice(1)));
  const exact = dropped[0] === '5' && !/[1-9]/.test(dropped.slice(1));
  switch (mode) {
    case 'ceil': return !neg;
    case 'floor': return neg;
    case 'expand': return true;
    case 'trunc': return false;
    case 'halfCeil': return half || (exact && !neg);
    case 'halfFloor': return half || (exact && neg);
    case 'halfTrunc': return half;
    case 'halfEven': return half || (exact && 'even');
    default: return dropped[0] >= '5';
  }
}
function roundAt(d, keepExp, mode) {
  /* round d to a multiple of 10^keepExp */
  if (d.ds === '' || d.e >= keepExp) return d;
  const cut = d.ds.length - (keepExp - d.e);
  let kept = cut > 0 ? d.ds.slice(0, cut) : '';
  const dropped = cut > 0 ? d.ds.slice(cut) : '0'.repeat(-cut) + d.ds;
  let up = roundUp(mode, d.neg, dropped);
  if (up === 'even') up = kept !== '' && Number(kept[kept.length - 1]) % 2 === 1;
  if (up) {
    const digits = ('0' + kept).split('').map(Number);
    let i = digits.length - 1;
    while (digits[i] === 9) { digits[i] = 0; i--; }
    digits[i]++;
    kept = digits.join('').replace(/^0+/, '');
  }
  const r = { neg: d.neg, ds: kept, e: keepExp };
  while (r.ds.endsWith('0')) { r.ds = r.ds.slice(0, -1); r.e++; }
  return r;
}
const magnitude = (d) => d.ds === '' ? 0 : d.ds.length + d.e - 1; /* exponent of the leading digit */
function digitsOf(d, minInt, minFrac) {
  /* [integer, fraction] strings of d, padded to minInt and minFrac digits */
  let int, frac;
  if (d.ds === '') { int = '0'; frac = ''; }
  else if (d.e >= 0) { int = d.ds + '0'.repeat(d.e); frac = ''; }
  else if (-d.e >= d.ds.length) { int = '0'; frac = '0'.repeat(-d.e - d.ds.length) + d.ds; }
  else { int = d.ds.slice(0, d.ds.length + d.e); frac = d.ds.slice(d.ds.length + d.e); }
  if (int.length < minInt) int = '0'.repeat(minInt - int.length) + int;
  if (frac.length < minFrac) frac += '0'.repeat(minFrac - frac.length);
  return [int, frac];
}
function rounded(d, o) {
  if (o.maxSig !== undefined) return roundAt(d, d.ds === '' ? 0 : magnitude(d) - o.maxSig + 1, o.roundingMode);
  return roundAt(d, -o.maxFrac, o.roundingMode);
}
function fractionFor(d, o) {
  /* the fraction digits to show at least, for d rounded by o */
  if (o.minSig === undefined) return o.minFrac;
  const lead = d.ds === '' ? 0 : magnitude(d);
  return Math.max(0, o.minSig - lead - 1);
}

const CURRENCIES = {
  USD: ['$', 'US dollar', 'US dollars'], EUR: ['€', 'euro', 'euros'], GBP: ['£', 'British pound', 'British pounds'],
  JPY: ['¥', 'Japanese yen', 'Japanese yen', 0], INR: ['₹', 'Indian rupee', 'Indian rupees'],
  CNY: ['CN¥', 'Chinese yuan', 'Chinese yuan'], CAD: ['CA$', 'Canadian dollar', 'Canadian dollars'],
  AUD: ['A$', 'Australian dollar', 'Australian dollars'], MXN: ['MX$', 'Mexican peso', 'Mexican pesos'],
  BRL: ['R$', 'Brazilian real', 'Brazilian reals'], KRW: ['₩', 'South Korean won', 'South Korean won', 0],
  HKD: ['HK$', 'Hong Kong dollar', 'Hong Kong dollars'], NZD: ['NZ$', 'New Zealand dollar', 'New Zealand dollars'],
  ILS: ['₪', 'Israeli new shekel', 'Israeli new shekels'], VND: ['₫', 'Vietnamese dong', 'Vietnamese dong', 0],
  TWD: ['NT$', 'New Taiwan dollar', 'New Taiwan dollars'], XAF: ['FCFA', 'Central African CFA franc', 'Central African CFA francs', 0],
  CHF: ['CHF', 'Swiss franc', 'Swiss francs'], SEK: ['SEK', 'Swedish krona', 'Swedish kronor'],
  NOK: ['NOK', 'Norwegian krone', 'Norwegian kroner'], DKK: ['DKK', 'Danish krone', 'Danish kroner'],
  PLN: ['PLN', 'Polish zloty', 'Polish zlotys'], RUB: ['RUB', 'Russian ruble', 'Russian rubles'],
  ZAR: ['ZAR', 'South African rand', 'South African rand'], SGD: ['SGD', 'Singapore dollar', 'Singapore dollars'],
  TRY: ['TRY', 'Turkish lira', 'Turkish Lira'], CZK: ['CZK', 'Czech koruna', 'Czech korunas'],
  HUF: ['HUF', 'Hungarian forint', 'Hungarian forints'], IDR: ['IDR', 'Indonesian rupiah', 'Indonesian rupiahs'],
  THB: ['THB', 'Thai baht', 'Thai baht'], PHP: ['₱', 'Philippine peso', 'Philippine pesos'],
  NGN: ['NGN', 'Nigerian naira', 'Nigerian nairas'], EGP: ['EGP', 'Egyptian pound', 'Egyptian pounds'],
  AED: ['AED', 'UAE dirham', 'UAE dirhams'], SAR: ['SAR', 'Saudi riyal', 'Saudi riyals'],
  KWD: ['KWD', 'Kuwaiti dinar', 'Kuwaiti dinars', 3], BHD: ['BHD', 'Bahraini dinar', 'Bahraini dinars', 3],
  BTC: ['BTC', 'BTC', 'BTC'],
};
/* unit -> [short, long singular, long plural, narrow]; '' before the short form: no space (°C, %) */
const UNITS = {
  percent: ['%', 'percent', 'percent', '%'], celsius: ['°C', 'degree Celsius', 'degrees Celsius', '°C'],
  fahrenheit: ['°F', 'degree Fahrenheit', 'degrees Fahrenheit', '°'], degree: ['deg', 'degree', 'degrees', '°'],
  bit: [' bit', 'bit', 'bits', 'bit'], byte: [' byte', 'byte', 'bytes', 'B'], kilobyte: [' kB', 'kilobyte', 'kilobytes', 'kB'],
  megabyte: [' MB', 'megabyte', 'megabytes', 'MB'], gigabyte: [' GB', 'gigabyte', 'gigabytes', 'GB'],
  terabyte: [' TB', 'terabyte', 'terabytes', 'TB'], petabyte: [' PB', 'petabyte', 'petabytes', 'PB'],
  kilobit: [' kb', 'kilobit', 'kilobits', 'kb'], megabit: [' Mb', 'megabit', 'megabits', 'Mb'], gigabit: [' Gb', 'gigabit', 'gigabits', 'Gb'],
  millimeter: [' mm', 'millimeter', 'millimeters', 'mm'], centimeter: [' cm', 'centimeter', 'centimeters', 'cm'],
  meter: [' m', 'meter', 'meters', 'm'], kilometer: [' km', 'kilometer', 'kilometers', 'km'],
  inch: [' in', 'inch', 'inches', '″'], foot: [' ft', 'foot', 'feet', '′'], yard: [' yd', 'yard', 'yards', 'yd'], mile: [' mi', 'mile', 'miles', 'mi'],
  gram: [' g', 'gram', 'grams', 'g'], kilogram: [' kg', 'kilogram', 'kilograms', 'kg'], ounce: [' oz', 'ounce', 'ounces', 'oz'],
  pound: [' lb', 'pound', 'pounds', 'lb'], stone: [' st', 'stone', 'stones', 'st'],
  milliliter: [' mL', 'milliliter', 'milliliters', 'mL'], liter: [' L', 'liter', 'liters', 'L'], gallon: [' gal', 'gallon', 'gallons', 'gal'],
  'fluid-ounce': [' fl oz', 'fluid ounce', 'fluid ounces', 'fl oz'], acre: [' ac', 'acre', 'acres', 'ac'], hectare: [' ha', 'hectare', 'hectares', 'ha'],
  millisecond: [' ms', 'millisecond', 'milliseconds', 'ms'], microsecond: [' μs', 'microsecond', 'microseconds', 'μs'],
  nanosecond: [' ns', 'nanosecond', 'nanoseconds', 'ns'], second: [' sec', 'second', 'seconds', 's'], minute: [' min', 'minute', 'minutes', 'm'],
  hour: [' hr', 'hour', 'hours', 'h'], day: [' day', 'day', 'days', 'd'], week: [' wk', 'week', 'weeks', 'w'],
  month: [' mth', 'month', 'months', 'm'], year: [' yr', 'year', 'years', 'y'],
  'kilometer-per-hour': [' km/h', 'kilometer per hour', 'kilometers per hour', 'km/h'], 'mile-per-hour': [' mph', 'mile per hour', 'miles per hour', 'mph'],
  'meter-per-second': [' m/s', 'meter per second', 'meters per second', 'm/s'], 'liter-per-kilometer': [' L/km', 'liter per kilometer', 'liters per kilometer', 'L/km'],
  'mile-per-gallon': [' mpg', 'mile per gallon', 'miles per gallon', 'mpg'],
};
const SHORT_PLURAL = { day: ' days', week: ' wks', month: ' mths', year: ' yrs', byte: ' byte', bit: ' bit' };
const COMPACT = [['', ''], ['K', ' thousand'], ['M', ' million'], ['B', ' billion'], ['T', ' trillion']];

class NumberFormat {
  #o;
  constructor(locales, options) {
    checkLocales(locales);
    const opts = toOptions(options);
    const o = { locale: LOCALE, numberingSystem: 'latn' };
    o.style = option('NumberFormat', opts, 'style', ['decimal', 'percent', 'currency', 'unit'], 'decimal');
    const currency = opts.currency;
    if (currency !== undefined && !/^[A-Za-z]{3}$/.test(String(currency))) throw new RangeError('Invalid currency code : ' + currency);
    if (o.style === 'currency' && currency === undefined) throw new TypeError('Currency code is required with currency style.');
    if (o.style === 'currency') {
      o.currency = String(currency).toUpperCase();
      o.currencyDisplay = option('NumberFormat', opts, 'currencyDisplay', ['symbol', 'narrowSymbol', 'code', 'name'], 'symbol');
      o.currencySign = option('NumberFormat', opts, 'currencySign', ['standard', 'accounting'], 'standard');
    }
    if (o.style === 'unit') {
      if (opts.unit === undefined) throw new TypeError('Unit is required with unit style.');
      o.unit = String(opts.unit);
      if (!UNITS[o.unit]) throw new RangeError('Invalid unit argument for Intl.NumberFormat() \'' + o.unit + '\'');
      o.unitDisplay = option('NumberFormat', opts, 'unitDisplay', ['short', 'narrow', 'long'], 'short');
    }
    const minorDigits = o.style === 'currency' ? ((CURRENCIES[o.currency] || [])[3] ?? 2) : 0;
    o.minimumIntegerDigits = digitsOption(opts, 'minimumIntegerDigits', 1, 21, 1);
    o.notation = option('NumberFormat', opts, 'notation', ['standard', 'scientific', 'engineering', 'compact'], 'standard');
    if (o.notation === 'compact') o.compactDisplay = option('NumberFormat', opts, 'compactDisplay', ['short', 'long'], 'short');
    const sig = opts.minimumSignificantDigits !== undefined || opts.maximumSignificantDigits !== undefined;
    const frac = opts.minimumFractionDigits !== undefined || opts.maximumFractionDigits !== undefined;
    if (sig) {
      o.minimumSignificantDigits = digitsOption(opts, 'minimumSignificantDigits', 1, 21, 1);
      o.maximumSignificantDigits = digitsOption(opts, 'maximumSignificantDigits', o.minimumSignificantDigits, 21, 21);
    } else {
      const defMin = o.notation === 'compact' ? 0 : minorDigits;
      const defMax = o.notation === 'compact' ? 0 : o.style === 'currency' ? minorDigits : o.style === 'percent' ? 0 : 3;
      let min = digitsOption(opts, 'minimumFractionDigits', 0, 20, undefined);
      let max = digitsOption(opts, 'maximumFractionDigits', 0, 20, undefined);
      if (min === undefined) min = Math.min(defMin, max ?? defMin);
      if (max === undefined) max = Math.max(defMax, min);
      if (min > max) throw new RangeError('maximumFractionDigits value is out of range.');
      o.minimumFractionDigits = min;
      o.maximumFractionDigits = max;
      o.compactRounding = o.notation === 'compact' && !frac;
    }
    const grouping = opts.useGrouping;
    o.useGrouping = grouping === undefined ? (o.notation === 'compact' ? 'min2' : 'auto') : grouping === false || grouping === 'false' ? false : grouping === true || grouping === 'true' ? 'always' : String(grouping);
    if (![false, 'auto', 'always', 'min2'].includes(o.useGrouping)) throw new RangeError('Value ' + grouping + ' out of range for Intl.NumberFormat options property useGrouping');
    o.signDisplay = option('NumberFormat', opts, 'signDisplay', ['auto', 'never', 'always', 'exceptZero', 'negative'], 'auto');
    o.roundingMode = option('NumberFormat', opts, 'roundingMode', ['ceil', 'floor', 'expand', 'trunc', 'halfCeil', 'halfFloor', 'halfExpand', 'halfTrunc', 'halfEven'], 'halfExpand');
    this.#o = o;
  }
  get format() { return boundFormat(this); }
  formatToParts(value) {
    const o = this.#o;
    const n = typeof value === 'bigint' ? value : typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) && Math.abs(Number(value)) > 2 ** 53 ? BigInt(value) : Number(value);
    const parts = [];
    const push = (type, v) => { if (v !== '') parts.push({ type, value: v }); };
    const neg = typeof n === 'bigint' ? n < 0n : n < 0 || Object.is(n, -0);
    let body = [];
    let d = null;
    if (typeof n === 'number' && Number.isNaN(n)) body.push({ type: 'nan', value: 'NaN' });
    else if (typeof n === 'number' && !Number.isFinite(n)) body.push({ type: 'infinity', value: '∞' });
    else {
      d = decimal(n);
      if (o.style === 'percent') d = { ...d, e: d.e + 2 };
      body = this.#digits(d);
      d = body.rounded;
      body = body.parts;
    }
    const zero = d !== null && d.ds === '';
    let sign = '';
    const s = o.signDisplay;
    if (neg && !(s === 'never') && !(zero && (s === 'exceptZero' || s === 'negative'))) sign = '-';
    else if (!neg && (s === 'always' || (s === 'exceptZero' && !zero && !(typeof n === 'number' && Number.isNaN(n))))) sign = '+';
    const accounting = o.style === 'currency' && o.currencySign === 'accounting' && sign === '-';
    /* exactly 1 with no fraction shown: a currency's or a unit's name in the singular */
    const one = d !== null && d.ds === '1' && d.e === 0 && !body.some((p) => p.type === 'fraction');
    if (accounting) push('literal', '(');
    else if (sign) push(sign === '-' ? 'minusSign' : 'plusSign', sign);
    if (o.style === 'currency') {
      const c = CURRENCIES[o.currency];
      if (o.currencyDisplay === 'name') {
        parts.push(...body);
        push('literal', ' ');
        push('currency', c ? c[one ? 1 : 2] : o.currency);
      } else {
        const symbol = o.currencyDisplay === 'code' || !c ? o.currency : o.currencyDisplay === 'narrowSymbol' ? c[0].replace(/^[A-Z]+(?=[^A-Z])/, '') : c[0];
        push('currency', symbol);
        if (/[A-Za-z]$/.test(symbol)) push('literal', NBSP);
        parts.push(...body);
      }
    } else {
      parts.push(...body);
      if (o.style === 'percent') push('percentSign', '%');
      if (o.style === 'unit') {
        const u = UNITS[o.unit];
        if (o.unitDisplay === 'long') { push('literal', ' '); push('unit', one ? u[1] : u[2]); }
        else if (o.unitDisplay === 'narrow') push('unit', u[3]);
        else {
          const short = !one && SHORT_PLURAL[o.unit] ? SHORT_PLURAL[o.unit] : u[0];
          if (short.startsWith(' ')) { push('literal', ' '); push('unit', short.slice(1)); } else push('unit', short);
        }
      }
    }
    if (accounting) push('literal', ')');
    return parts;
  }
  #digits(d) {
    const o = this.#o;
    const r = { roundingMode: o.roundingMode, maxSig: o.maximumSignificantDigits, minSig: o.minimumSignificantDigits, maxFrac: o.maximumFractionDigits, minFrac: o.minimumFractionDigits };
    let exponent = 0, suffix = '';
    if (o.notation === 'scientific' || o.notation === 'engineering') {
      let mag = magnitude(d);
      if (o.notation === 'engineering') mag = Math.floor(mag / 3) * 3;
      let m = rounded({ ...d, e: d.e - mag }, r);
      if (magnitude(m) >= (o.notation === 'engineering' ? 3 : 1) && m.ds !== '') { mag += o.notation === 'engineering' ? 3 : 1; m = rounded({ ...d, e: d.e - mag }, r); }
      exponent = mag; d = m;
    } else if (o.notation === 'compact') {
      const compactRound = (v) => o.compactRounding ? (magnitude(v) >= 1 ? roundAt(v, 0, r.roundingMode) : roundAt(v, magnitude(v) - 1, r.roundingMode)) : rounded(v, r);
      let k = Math.min(Math.max(0, Math.floor(magnitude(d) / 3)), 4);
      let m = compactRound({ ...d, e: d.e - 3 * k });
      if (magnitude(m) >= 3 && k < 4 && m.ds !== '') { k++; m = compactRound({ ...d, e: d.e - 3 * k }); }
      d = m;
      suffix = COMPACT[k][o.compactDisplay === 'long' ? 1 : 0];
    } else d = rounded(d, r);
    const [int, fracDigits] = digitsOf(d, o.minimumIntegerDigits, fractionFor(d, r));
    const parts = [];
    const group = o.useGrouping === 'always' || o.useGrouping === 'auto' ? int.length > 3 : o.useGrouping === 'min2' ? int.length > 4 : false;
    if (group) {
      const head = int.length % 3 || 3;
      parts.push({ type: 'integer', value: int.slice(0, head) });
      for (let i = head; i < int.length; i += 3) { parts.push({ type: 'group', value: ',' }); parts.push({ type: 'integer', value: int.slice(i, i + 3) }); }
    } else parts.push({ type: 'integer', value: int });
    if (fracDigits) { parts.push({ type: 'decimal', value: '.' }); parts.push({ type: 'fraction', value: fracDigits }); }
    if (o.notation === 'scientific' || o.notation === 'engineering') {
      parts.push({ type: 'exponentSeparator', value: 'E' });
      if (exponent < 0) parts.push({ type: 'exponentMinusSign', value: '-' });
      parts.push({ type: 'exponentInteger', value: String(Math.abs(exponent)) });
    }
    if (suffix) {
      if (suffix.startsWith(' ')) parts.push({ type: 'literal', value: ' ' });
      parts.push({ type: 'compact', value: suffix.trim() });
    }
    return { parts, rounded: d };
  }
  resolvedOptions() {
    const o = this.#o, r = {};
    for (const k of ['locale', 'numberingSystem', 'style', 'currency', 'currencyDisplay', 'currencySign', 'unit', 'unitDisplay',
      'minimumIntegerDigits', 'minimumFractionDigits', 'maximumFractionDigits', 'minimumSignificantDigits', 'maximumSignificantDigits',
      'useGrouping', 'notation', 'compactDisplay', 'signDisplay', 'roundingMode']) if (o[k] !== undefined) r[k] = o[k];
    return Object.assign(r, { roundingIncrement: 1, trailingZeroDisplay: 'auto', roundingPriority: 'auto' });
  }
  get [Symbol.toStringTag]() { return 'Intl.NumberFormat'; }
}
statics(NumberFormat);

/* ---- dates: en-US patterns, in UTC ---- */
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const UTC_NAMES = ['UTC', 'ETC/UTC', 'GMT', 'ETC/GMT', 'ETC/UCT', 'UCT', 'ZULU', 'ETC/ZULU', 'UNIVERSAL', 'ETC/UNIVERSAL', 'ETC/GREENWICH', 'GREENWICH'];
/* The zones programs name most, with today's rules (a date before a rule changed gets today's rule too):
   name -> [standard offset in minutes, daylight-saving rule or null, US abbreviation letter] */
const ZONES = {};
for (const [offset, rule, names, us] of [
  [-300, 'us', 'America/New_York America/Toronto America/Detroit US/Eastern', 'E'], [-360, 'us', 'America/Chicago America/Winnipeg US/Central', 'C'],
  [-420, 'us', 'America/Denver America/Edmonton US/Mountain', 'M'], [-420, null, 'America/Phoenix', 'M'],
  [-480, 'us', 'America/Los_Angeles America/Vancouver America/Tijuana US/Pacific', 'P'], [-540, 'us', 'America/Anchorage', 'AK'],
  [-600, null, 'Pacific/Honolulu', 'H'], [-360, null, 'America/Mexico_City'], [-300, null, 'America/Bogota America/Lima'],
  [-240, null, 'America/Caracas'], [-180, null, 'America/Sao_Paulo America/Argentina/Buenos_Aires America/Buenos_Aires'],
  [0, 'eu', 'Europe/London Europe/Dublin Europe/Lisbon'], [0, null, 'Africa/Abidjan Africa/Accra Atlantic/Reykjavik'],
  [60, 'eu', 'Europe/Paris Europe/Berlin Europe/Madrid Europe/Rome Europe/Amsterdam Europe/Brussels Europe/Vienna Europe/Stockholm Europe/Oslo Europe/Copenhagen Europe/Warsaw Europe/Prague Europe/Zurich Europe/Budapest Europe/Belgrade'],
  [60, null, 'Africa/Lagos Africa/Algiers'], [120, 'eu', 'Europe/Athens Europe/Helsinki Europe/Kiev Europe/Kyiv Europe/Bucharest Europe/Sofia Europe/Riga Europe/Vilnius Europe/Tallinn'],
  [120, null, 'Africa/Johannesburg'], [180, null, 'Europe/Istanbul Europe/Moscow Africa/Nairobi Asia/Riyadh Asia/Baghdad'],
  [210, null, 'Asia/Tehran'], [240, null, 'Asia/Dubai'], [270, null, 'Asia/Kabul'], [300, null, 'Asia/Karachi Asia/Tashkent Asia/Almaty'],
  [330, null, 'Asia/Kolkata Asia/Calcutta'], [345, null, 'Asia/Kathmandu'], [360, null, 'Asia/Dhaka'],
  [420, null, 'Asia/Bangkok Asia/Jakarta Asia/Ho_Chi_Minh'], [480, null, 'Asia/Shanghai Asia/Hong_Kong Asia/Singapore Asia/Taipei Asia/Manila Australia/Perth'],
  [540, null, 'Asia/Tokyo Asia/Seoul'], [570, 'au', 'Australia/Adelaide'], [600, 'au', 'Australia/Sydney Australia/Melbourne Australia/Hobart Australia/Canberra'],
  [600, null, 'Australia/Brisbane'], [720, 'nz', 'Pacific/Auckland'],
]) for (const name of names.split(' ')) ZONES[name.toUpperCase()] = [name, offset, rule, us];
const sunday = (year, month, nth) => {
  /* the day of month of the nth Sunday (nth < 0: from the end) of month (0-11) */
  if (nth > 0) { const first = new Date(Date.UTC(year, month, 1)).getUTCDay(); return 1 + (7 - first) % 7 + 7 * (nth - 1); }
  const last = new Date(Date.UTC(year, month + 1, 0)); return last.getUTCDate() - last.getUTCDay();
};
function zoneOffset(zone, t) {
  /* minutes east of UTC in zone at time t, and whether daylight saving time applies */
  const [, std, rule] = zone;
  if (!rule) return [std, false];
  const y = new Date(t + std * 60000).getUTCFullYear();
  const at = (month, nth, hourUtc) => Date.UTC(y, month, sunday(y, month, nth)) + hourUtc * 3600000;
  let start, end;
  if (rule === 'us') { start = at(2, 2, 2 - std / 60); end = at(10, 1, 2 - (std + 60) / 60); }
  else if (rule === 'eu') { start = at(2, -1, 1); end = at(9, -1, 1); }
  else if (rule === 'au') { start = at(9, 1, 2 - std / 60); end = at(3, 1, 3 - (std + 60) / 60); }
  else { start = at(8, -1, 2 - std / 60); end = at(3, 1, 3 - (std + 60) / 60); }
  const dst = start < end ? t >= start && t < end : t >= start || t < end;
  return [std + (dst ? 60 : 0), dst];
}
const US_ZONE_NAMES = { E: 'Eastern', C: 'Central', M: 'Mountain', P: 'Pacific', AK: 'Alaska', H: 'Hawaii-Aleutian' };
function zoneName(zone, offset, dst, style) {
  const us = zone && zone[3];
  if (us && style === 'short') return us + (dst ? 'D' : 'S') + 'T';
  if (us && style === 'long') return US_ZONE_NAMES[us] + (dst ? ' Daylight' : ' Standard') + ' Time';
  if (!zone) return style === 'long' ? 'Coordinated Universal Time' : 'UTC';
  const h = Math.trunc(Math.abs(offset) / 60), m = Math.abs(offset) % 60;
  if (offset === 0) return 'GMT';
  return 'GMT' + (offset < 0 ? '-' : '+') + (style === 'long' ? String(h).padStart(2, '0') + ':' + String(m).padStart(2, '0') : h + (m ? ':' + String(m).padStart(2, '0') : ''));
}
const FIELDS = ['weekday', 'era', 'year', 'month', 'day', 'dayPeriod', 'hour', 'minute', 'second', 'fractionalSecondDigits', 'timeZoneName'];
const STYLES = ['full', 'long', 'medium', 'short'];
const STYLE_DATE = {
  full: { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' }, long: { year: 'numeric', month: 'long', day: 'numeric' },
  medium: { year: 'numeric', month: 'short', day: 'numeric' }, short: { year: '2-digit', month: 'numeric', day: 'numeric' },
};
const STYLE_TIME = {
  full: { hour: 'numeric', minute: '2-digit', second: '2-digit', timeZoneName: 'long' },
  long: { hour: 'numeric', minute: '2-digit', second: '2-digit', timeZoneName: 'short' },
  medium: { hour: 'numeric', minute: '2-digit', second: '2-digit' }, short: { hour: 'numeric', minute: '2-digit' },
};

class DateTimeFormat {
  #o;
  #zone;
  /* defaults: 'date' (format, toLocaleDateString), 'time' (toLocaleTimeString), 'all' (toLocaleString) */
  constructor(locales, options, defaults = 'date') {
    checkLocales(locales);
    const opts = toOptions(options);
    const o = { locale: LOCALE, calendar: 'gregory', numberingSystem: 'latn' };
    const zone = opts.timeZone === undefined ? 'UTC' : String(opts.timeZone);
    const known = ZONES[zone.toUpperCase()];
    if (!known && !UTC_NAMES.includes(zone.toUpperCase())) throw new RangeError(`Invalid time zone specified: ${zone} (this sandbox's JavaScript knows UTC and the zones of major cities only)`);
    o.timeZone = known ? known[0] : zone.toUpperCase() === 'UTC' ? 'UTC' : zone;
    this.#zone = known || null;
    const hour12 = opts.hour12;
    const cycle = option('DateTimeFormat', opts, 'hourCycle', ['h11', 'h12', 'h23', 'h24'], undefined);
    o.hourCycle = hour12 !== undefined ? (hour12 ? 'h12' : 'h24') : cycle ?? 'h12';
    const dateStyle = option('DateTimeFormat', opts, 'dateStyle', STYLES, undefined);
    const timeStyle = option('DateTimeFormat', opts, 'timeStyle', STYLES, undefined);
    const fields = {};
    const allowed = { weekday: ['narrow', 'short', 'long'], era: ['narrow', 'short', 'long'], year: ['numeric', '2-digit'], month: ['numeric', '2-digit', 'narrow', 'short', 'long'],
      day: ['numeric', '2-digit'], dayPeriod: ['narrow', 'short', 'long'], hour: ['numeric', '2-digit'], minute: ['numeric', '2-digit'], second: ['numeric', '2-digit'],
      timeZoneName: ['short', 'long', 'shortOffset', 'longOffset', 'shortGeneric', 'longGeneric'] };
    for (const f of FIELDS) {
      if (f === 'fractionalSecondDigits') { const v = digitsOption(opts, f, 1, 3, undefined); if (v !== undefined) fields[f] = v; continue; }
      const v = option('DateTimeFormat', opts, f, allowed[f], undefined);
      if (v !== undefined) fields[f] = v;
    }
    if ((dateStyle || timeStyle) && Object.keys(fields).length) throw new TypeError("Can't set option " + Object.keys(fields)[0] + ' when ' + (dateStyle ? 'dateStyle' : 'timeStyle') + ' is used');
    if (dateStyle || timeStyle) {
      Object.assign(fields, dateStyle ? STYLE_DATE[dateStyle] : {}, timeStyle ? STYLE_TIME[timeStyle] : {});
      if (dateStyle) o.dateStyle = dateStyle;
      if (timeStyle) o.timeStyle = timeStyle;
    } else {
      const hasDate = ['weekday', 'year', 'month', 'day'].some((f) => f in fields);
      const hasTime = ['dayPeriod', 'hour', 'minute', 'second', 'fractionalSecondDigits'].some((f) => f in fields);
      if (!hasDate && !hasTime) {
        if (defaults !== 'time') Object.assign(fields, { year: 'numeric', month: 'numeric', day: 'numeric' });
        if (defaults !== 'date') Object.assign(fields, { hour: 'numeric', minute: '2-digit', second: '2-digit' });
      }
    }
    this.#o = Object.assign(o, fields);
  }
  get format() { return boundFormat(this); }
  formatToParts(when) {
    const o = this.#o;
    const t = when === undefined ? Date.now() : Number(when instanceof Date ? when.getTime() : when);
    if (!Number.isFinite(t)) throw new RangeError('Invalid time value');
    const [offset, dst] = this.#zone ? zoneOffset(this.#zone, t) : [0, false];
    const d = new Date(t + offset * 60000);
    const parts = [];
    const lit = (v) => { if (parts.length && parts[parts.length - 1].type === 'literal') parts[parts.length - 1].value += v; else parts.push({ type: 'literal', value: v }); };
    const put = (type, value) => parts.push({ type, value });
    const pad = (n, how) => how === '2-digit' ? String(n).padStart(2, '0').slice(-2) : String(n);
    const textMonth = ['short', 'long', 'narrow'].includes(o.month);
    const monthName = (m) => o.month === 'long' ? MONTHS[m] : o.month === 'short' ? MONTHS[m].slice(0, 3) : MONTHS[m][0];
    const dayName = (w) => o.weekday === 'long' ? DAYS[w] : o.weekday === 'short' ? DAYS[w].slice(0, 3) : DAYS[w][0];
    const year = o.year === '2-digit' ? pad(d.getUTCFullYear() % 100, '2-digit') : String(d.getUTCFullYear());
    let date = false;
    if (o.weekday) { put('weekday', dayName(d.getUTCDay())); date = true; }
    if (textMonth) {
      if (o.weekday && (o.month || o.day || o.year)) lit(', ');
      if (o.month) put('month', monthName(d.getUTCMonth()));
      if (o.day) { if (o.month) lit(' '); put('day', pad(d.getUTCDate(), o.day)); }
      if (o.year) { lit(o.day ? ', ' : ' '); put('year', year); }
      date = true;
    } else if (o.month || o.day || o.year) {
      if (o.weekday) lit(', ');
      const fields = [];
      if (o.month) fields.push(['month', pad(d.getUTCMonth() + 1, o.month)]);
      if (o.day) fields.push(['day', pad(d.getUTCDate(), o.day)]);
      if (o.year) fields.push(['year', year]);
      fields.forEach(([type, value], i) => { if (i) lit('/'); put(type, value); });
      date = true;
    }
    const hasTime = o.hour || o.minute || o.second || o.fractionalSecondDigits;
    if (hasTime) {
      if (date) lit(o.month === 'long' ? ' at ' : ', ');
      const h = d.getUTCHours();
      const twelve = o.hourCycle === 'h12' || o.hourCycle === 'h11';
      if (o.hour) {
        let hv = twelve ? (o.hourCycle === 'h11' ? h % 12 : h % 12 || 12) : o.hourCycle === 'h24' ? h || 24 : h;
        put('hour', twelve ? pad(hv, o.hour) : String(hv).padStart(2, '0'));
      }
      const twoDigits = o.hour !== undefined;
      if (o.minute) { if (o.hour) lit(':'); put('minute', twoDigits || o.second ? String(d.getUTCMinutes()).padStart(2, '0') : pad(d.getUTCMinutes(), o.minute)); }
      if (o.second) { if (o.hour || o.minute) lit(':'); put('second', o.hour || o.minute ? String(d.getUTCSeconds()).padStart(2, '0') : pad(d.getUTCSeconds(), o.second)); }
      if (o.fractionalSecondDigits) { lit('.'); put('fractionalSecond', String(d.getUTCMilliseconds()).padStart(3, '0').slice(0, o.fractionalSecondDigits)); }
      if (o.hour && twelve) { lit(' '); put('dayPeriod', h < 12 ? 'AM' : 'PM'); }
    }
    if (o.timeZoneName) { lit(' '); put('timeZoneName', zoneName(this.#zone, offset, dst, o.timeZoneName === 'long' ? 'long' : 'short')); }
    return parts;
  }
  resolvedOptions() {
    const o = { ...this.#o };
    if (!o.hour) delete o.hourCycle;
    else o.hour12 = o.hourCycle === 'h12' || o.hourCycle === 'h11';
    return o;
  }
  get [Symbol.toStringTag]() { return 'Intl.DateTimeFormat'; }
}
statics(DateTimeFormat);

/* ---- collation: the root collation's order, in three levels (letters, accents, case) ---- */
const ORDER = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz";
const PUNCT = " _-,;:!?.'\"()[]{}@*/\\&#%";
const FOLD = { 'ß': 'ss', 'æ': 'ae', 'œ': 'oe', 'ø': 'o', 'đ': 'd', 'ł': 'l', 'þ': 'th', 'ı': 'i' };
function elements(s, o) {
  /* s -> [primary, secondary, tertiary] per element */
  const out = [];
  const chars = Array.from(s);
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i];
    if (o.numeric && ch >= '0' && ch <= '9') {
      let j = i;
      while (j < chars.length && chars[j] >= '0' && chars[j] <= '9') j++;
      const digits = chars.slice(i, j).join('').replace(/^0+(?=\d)/, '');
      out.push([ORDER.indexOf('0') + digits.length / 1e3 + Number('0.' + digits) / 1e3, 0, 0]);
      i = j - 1;
      continue;
    }
    if (o.ignorePunctuation && (PUNCT.includes(ch) || /[\s\p{P}]/u.test(ch))) continue;
    const base = ch.normalize('NFD');
    const marks = base.slice(1).replace(/[^\u0300-\u036f]/g, '');
    let letters = base[0].toLowerCase();
    const upper = base[0] !== letters;
    const folded = FOLD[letters];
    if (folded) letters = folded;
    const accent = marks ? marks.codePointAt(0) : folded && letters.length > 1 ? 1 : 0;
    for (const c of letters) {
      let p = ORDER.indexOf(c);
      if (p < 0) {
        const cp = c.codePointAt(0);
        if (/\s/u.test(c)) p = 0;
        else if (/\p{P}/u.test(c)) p = PUNCT.length - 0.5 + cp / 1e7;
        else if (/\p{Sc}/u.test(c)) p = ORDER.indexOf('$') + cp / 1e7;
        else if (/\p{S}/u.test(c)) p = ORDER.indexOf('$') - 0.5 + cp / 1e7;
        else if (/\p{N}/u.test(c)) p = ORDER.indexOf('9') + 0.5;
        else p = ORDER.length + cp;
      }
      out.push([p, accent, upper ? 1 : 0]);
    }
  }
  return out;
}
function compareLevel(a, b, level, flip) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i][level] !== b[i][level]) return (a[i][level] < b[i][level] ? -1 : 1) * (flip ? -1 : 1);
  }
  return level === 0 ? Math.sign(a.length - b.length) : 0;
}
class Collator {
  #o;
  constructor(locales, options) {
    checkLocales(locales);
    const opts = toOptions(options);
    const usage = option('Collator', opts, 'usage', ['sort', 'search'], 'sort');
    const sensitivity = option('Collator', opts, 'sensitivity', ['base', 'accent', 'case', 'variant'], 'variant');
    const caseFirst = option('Collator', opts, 'caseFirst', ['upper', 'lower', 'false'], 'false');
    this.#o = { locale: LOCALE, usage, sensitivity, ignorePunctuation: !!opts.ignorePunctuation, collation: 'default', numeric: !!opts.numeric, caseFirst };
  }
  get compare() {
    const o = this.#o;
    const cmp = (a, b) => {
      const ea = elements(String(a), o), eb = elements(String(b), o);
      let r = compareLevel(ea, eb, 0);
      if (r || o.sensitivity === 'base') return r;
      if (o.sensitivity !== 'case') { r = compareLevel(ea, eb, 1); if (r) return r; }
      if (o.sensitivity === 'accent') return 0;
      return compareLevel(ea, eb, 2, o.caseFirst === 'upper');
    };
    define(this, 'compare', cmp);
    return cmp;
  }
  resolvedOptions() { return { ...this.#o }; }
  get [Symbol.toStringTag]() { return 'Intl.Collator'; }
}
statics(Collator);

/* ---- plurals, lists, relative times ---- */
class PluralRules {
  #o;
  constructor(locales, options) {
    checkLocales(locales);
    const opts = toOptions(options);
    this.#o = { locale: LOCALE, type: option('PluralRules', opts, 'type', ['cardinal', 'ordinal'], 'cardinal') };
    this.#o.fmt = new NumberFormat(LOCALE, opts.minimumFractionDigits !== undefined || opts.maximumFractionDigits !== undefined ? { minimumFractionDigits: opts.minimumFractionDigits, maximumFractionDigits: opts.maximumFractionDigits } : {});
  }
  select(n) {
    n = Number(n);
    if (this.#o.type === 'ordinal') {
      const i = Math.abs(Math.trunc(n)), m10 = i % 10, m100 = i % 100;
      if (m10 === 1 && m100 !== 11) return 'one';
      if (m10 === 2 && m100 !== 12) return 'two';
      if (m10 === 3 && m100 !== 13) return 'few';
      return 'other';
    }
    return this.#o.fmt.format(Math.abs(n)) === '1' ? 'one' : 'other';
  }
  resolvedOptions() { return { locale: LOCALE, type: this.#o.type, pluralCategories: this.#o.type === 'ordinal' ? ['few', 'one', 'two', 'other'] : ['one', 'other'] }; }
  get [Symbol.toStringTag]() { return 'Intl.PluralRules'; }
}
statics(PluralRules);

class ListFormat {
  #o;
  constructor(locales, options) {
    checkLocales(locales);
    const opts = toOptions(options);
    this.#o = { locale: LOCALE, type: option('ListFormat', opts, 'type', ['conjunction', 'disjunction', 'unit'], 'conjunction'), style: option('ListFormat', opts, 'style', ['long', 'short', 'narrow'], 'long') };
  }
  format(list) {
    const items = Array.from(list === undefined ? [] : list, (v) => { if (typeof v !== 'string') throw new TypeError('Iterable yielded ' + v + ' which is not a string'); return v; });
    const { type, style } = this.#o;
    if (items.length < 2) return items.join('');
    const sep = type === 'unit' && style === 'narrow' ? ' ' : ', ';
    let last;
    if (type === 'unit') last = sep;
    else if (type === 'disjunction') last = items.length === 2 ? ' or ' : ', or ';
    else if (style === 'long') last = items.length === 2 ? ' and ' : ', and ';
    else if (style === 'short') last = items.length === 2 ? ' & ' : ', & ';
    else last = ', ';
    return items.slice(0, -1).join(sep) + last + items[items.length - 1];
  }
  resolvedOptions() { return { ...this.#o }; }
  get [Symbol.toStringTag]() { return 'Intl.ListFormat'; }
}
statics(ListFormat);

const RT_SHORT = { second: 'sec.', minute: 'min.', hour: 'hr.', day: ['day', 'days'], week: 'wk.', month: 'mo.', quarter: ['qtr.', 'qtrs.'], year: 'yr.' };
const RT_NARROW = { second: 's', minute: 'm', hour: 'h', day: 'd', week: 'w', month: 'mo', quarter: 'q', year: 'y' };
const RT_AUTO = {
  day: { '-1': 'yesterday', 0: 'today', 1: 'tomorrow' }, year: { '-1': 'last year', 0: 'this year', 1: 'next year' },
  month: { '-1': 'last month', 0: 'this month', 1: 'next month' }, week: { '-1': 'last week', 0: 'this week', 1: 'next week' },
  quarter: { '-1': 'last quarter', 0: 'this quarter', 1: 'next quarter' }, hour: { 0: 'this hour' }, minute: { 0: 'this minute' }, second: { 0: 'now' },
};
class RelativeTimeFormat {
  #o;
  constructor(locales, options) {
    checkLocales(locales);
    const opts = toOptions(options);
    this.#o = { locale: LOCALE, style: option('RelativeTimeFormat', opts, 'style', ['long', 'short', 'narrow'], 'long'), numeric: option('RelativeTimeFormat', opts, 'numeric', ['always', 'auto'], 'always'), numberingSystem: 'latn' };
  }
  format(value, unit) {
    const v = Number(value);
    if (!Number.isFinite(v)) throw new RangeError('Invalid time value');
    const u = String(unit).replace(/s$/, '');
    if (!RT_NARROW[u]) throw new RangeError('Invalid unit argument for format() \'' + unit + '\'');
    const { style, numeric } = this.#o;
    if (numeric === 'auto' && RT_AUTO[u] && RT_AUTO[u][String(v)] !== undefined && !Object.is(v, -0)) return RT_AUTO[u][String(v)];
    const past = v < 0 || Object.is(v, -0);
    const text = new NumberFormat(LOCALE).format(Math.abs(v));
    const one = text === '1';
    let name;
    if (style === 'long') name = ' ' + u + (one ? '' : 's');
    else if (style === 'short') { const s = RT_SHORT[u]; name = ' ' + (Array.isArray(s) ? s[one ? 0 : 1] : s); }
    else name = RT_NARROW[u];
    return past ? text + name + ' ago' : 'in ' + text + name;
  }
  resolvedOptions() { return { ...this.#o }; }
  get [Symbol.toStringTag]() { return 'Intl.RelativeTimeFormat'; }
}
statics(RelativeTimeFormat);

/* NumberFormat, DateTimeFormat and Collator may be called without new, as programs do
   (Intl.NumberFormat('en-US', {...}).format(n)); the others are classes. */
function callable(C) {
  const F = { [C.name]: function (locales, options) { return new C(locales, options); } }[C.name];
  F.prototype = C.prototype;
  define(C.prototype, 'constructor', F);
  define(F, 'supportedLocalesOf', C.supportedLocalesOf);
  return F;
}
const Intl = {};
for (const C of [Collator, DateTimeFormat, NumberFormat]) define(Intl, C.name, callable(C));
for (const C of [ListFormat, PluralRules, RelativeTimeFormat]) define(Intl, C.name, C);
define(Intl, 'getCanonicalLocales', (locales) => canonical(locales));
define(Intl, 'supportedValuesOf', (key) => { throw new RangeError(`Invalid key : ${key} (this sandbox's Intl has English only)`); });
Object.defineProperty(Intl, Symbol.toStringTag, { value: 'Intl', configurable: true });

/* What core.js puts in place of QuickJS's own methods. */
const number = (v) => { if (typeof v !== 'number' && !(v instanceof Number)) throw new TypeError('not a number'); return Number(v); };
const time = (d) => { if (!(d instanceof Date)) throw new TypeError('this is not a Date object.'); return d.getTime(); };
const dated = (d, locales, options, defaults) => { const t = time(d); return Number.isNaN(t) ? 'Invalid Date' : new DateTimeFormat(locales, options, defaults).format(t); };
const methods = {
  numberToLocaleString: (n, locales, options) => new NumberFormat(locales, options).format(number(n)),
  bigintToLocaleString: (n, locales, options) => new NumberFormat(locales, options).format(BigInt.prototype.valueOf.call(n)),
  toLocaleString: (d, locales, options) => dated(d, locales, options, 'all'),
  toLocaleDateString: (d, locales, options) => dated(d, locales, options, 'date'),
  toLocaleTimeString: (d, locales, options) => dated(d, locales, options, 'time'),
  localeCompare: (s, that, locales, options) => new Collator(locales, options).compare(s, that),
};
return { Intl, methods };
})
