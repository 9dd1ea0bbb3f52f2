module.exports.money = (value, currency) => `${value.toFixed(2)} ${currency}`;
